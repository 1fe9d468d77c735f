/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The straightforward scan mroce_conn_next_timer() used to be, kept as the
 * oracle of the optimised one: the fuzzer and the unit-test harness check
 * both agree after every step.
 */
#ifndef MROCE_TIMER_REF_H
#define MROCE_TIMER_REF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_conn;
uint64_t mroce_next_timer_ref(const struct mroce_conn *c);
/* The earliest deadline of path @i of @c, 0 when it has none. */
uint64_t mroce_path_timer_ref(const struct mroce_conn *c, uint32_t i);

#ifdef __cplusplus
}
#endif

#endif
