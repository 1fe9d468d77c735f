#!/bin/sh
# Linux kernel style for every C file of the module, the core, the uapi and
# the provider, with checkpatch.pl from Debian's linux-source-6.1 (unpacked
# into .cache/ on first use).  Fails on any ERROR or WARNING.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${METAROCE_CACHE:-$top/.cache}
cp="$cache/checkpatch/scripts/checkpatch.pl"
if [ ! -x "$cp" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.xz)
	mkdir -p "$cache/checkpatch"
	tar -C "$cache/checkpatch" --strip-components=1 -xf "$tarball" \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi
cd "$top"
files=$(ls kernel/*.c kernel/*.h kernel/core/*.c kernel/core/*.h uapi/*.h \
	2>/dev/null)
provider=$(ls rdma-core-provider/*.c rdma-core-provider/*.h 2>/dev/null)
# The core and the provider are not kernel files in every respect:
#  - they define their own fixed-width types for userspace builds,
#  - the provider includes libc and libibverbs headers.
perl "$cp" --no-tree --quiet --show-types --terse \
	--ignore SPDX_LICENSE_TAG,NEW_TYPEDEFS,FILE_PATH_CHANGES,PREFER_KERNEL_TYPES,SPLIT_STRING,PREFER_DEFINED_ATTRIBUTE_MACRO \
	-f $files
# Userspace verbs return positive errno values (ibv_post_send, ibv_modify_qp);
# EMBEDDED_FILENAME misfires on expressions like "cq->vcq.cq" in cq.c.
perl "$cp" --no-tree --quiet --show-types --terse \
	--ignore SPDX_LICENSE_TAG,NEW_TYPEDEFS,FILE_PATH_CHANGES,PREFER_KERNEL_TYPES,SPLIT_STRING,PREFER_DEFINED_ATTRIBUTE_MACRO,USE_NEGATIVE_ERRNO,EMBEDDED_FILENAME \
	-f $provider
