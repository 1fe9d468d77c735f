// The event engine and the random numbers it is seeded with.
#include "event_queue.h"
#include "rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

using namespace mroce::sim;

TEST(EventQueue, PopsInTimeOrderAndFifoForTies) {
  EventQueue q;
  Rng rng(7);
  std::vector<std::pair<Time, uint64_t>> expect;
  for (uint64_t i = 0; i < 20000; ++i) {
    const Time t = rng.below(500); // many equal times
    q.push(t, 0, 0, i);
    expect.emplace_back(t, i);
  }
  // Reference: stable sort by time keeps insertion order among equal times.
  std::stable_sort(expect.begin(), expect.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[t, arg] : expect) {
    ASSERT_FALSE(q.empty());
    const Event e = q.pop();
    ASSERT_EQ(e.time, t);
    ASSERT_EQ(e.arg, arg);
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, InterleavedPushPopStaysOrdered) {
  EventQueue q;
  Rng rng(3);
  Time now = 0;
  uint64_t popped = 0;
  q.push(0, 1, 2, 3);
  while (!q.empty() && popped < 100000) {
    const Event e = q.pop();
    ASSERT_GE(e.time, now);
    now = e.time;
    ++popped;
    const int children = static_cast<int>(rng.below(3)); // 0..2, mean 1
    for (int c = 0; c < children && q.size() < 1000; ++c)
      q.push(now + rng.below(100), 1, 2, 3);
    if (q.empty())
      q.push(now + 1, 1, 2, 3);
  }
  EXPECT_EQ(popped, 100000u);
}

// The queue keeps near events in a calendar and the rest in a heap: whatever
// goes where, the order is (time, insertion), as one sorted list would give.
TEST(EventQueue, CalendarAndHeapGiveOneOrder) {
  EventQueue q;
  Rng rng(5);
  std::set<std::pair<Time, uint64_t>> ref; // (time, insertion number)
  Time now = 0;
  uint64_t n = 0;
  auto push = [&](Time t, bool timer) {
    if (timer)
      q.push(t, 3, 0, n);
    else
      q.push(t, 1, 0, n);
    ref.emplace(t, n++);
  };
  for (int i = 0; i < 200000; ++i) {
    const uint64_t r = rng.below(100);
    if (r < 55 || ref.empty()) {
      // Mostly within a few microseconds (the calendar), with bursts at
      // one time (full buckets), some far off and some timers.
      Time t = now;
      if (r < 20)
        t += rng.below(2'000'000);
      else if (r < 35)
        t += rng.below(20'000);
      else if (r < 45)
        t += rng.below(200'000'000);
      push(t, r >= 50);
      continue;
    }
    if (r == 99) {
      push(now > 5'000'000 ? now - rng.below(5'000'000) : 0, false); // into the past
      continue;
    }
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(q.top().arg, ref.begin()->second);
    const Event e = q.pop();
    ASSERT_EQ(e.time, ref.begin()->first);
    ASSERT_EQ(e.arg, ref.begin()->second);
    ref.erase(ref.begin());
    now = std::max(now, e.time);
  }
  while (!ref.empty()) {
    const Event e = q.pop();
    ASSERT_EQ(e.arg, ref.begin()->second);
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(q.empty());
}

// Few events, far apart: the calendar is often empty and its window jumps
// to the wheel's next bucket, with heap events (beyond the wheel's ~1 ms)
// in between.
TEST(EventQueue, SparseEventsKeepOneOrder) {
  EventQueue q;
  Rng rng(11);
  std::set<std::pair<Time, uint64_t>> ref;
  Time now = 0;
  uint64_t n = 0;
  for (int i = 0; i < 100000; ++i) {
    if (ref.size() < 8 && rng.below(2) == 0) {
      const uint64_t r = rng.below(10);
      const Time t = now + (r < 6 ? rng.below(1'500'000'000) : r < 9 ? rng.below(3'000'000) : 0);
      q.push(t, 3, 0, n);
      ref.emplace(t, n++);
      continue;
    }
    if (ref.empty())
      continue;
    ASSERT_EQ(q.top().arg, ref.begin()->second);
    const Event e = q.pop();
    ASSERT_EQ(e.time, ref.begin()->first);
    ASSERT_EQ(e.arg, ref.begin()->second);
    ref.erase(ref.begin());
    now = e.time;
  }
}

TEST(EventQueue, CarriesPayload) {
  EventQueue q;
  q.push(5, 7, 42, 0xdeadbeef);
  const Event e = q.pop();
  EXPECT_EQ(e.type, 7);
  EXPECT_EQ(e.target, 42u);
  EXPECT_EQ(e.arg, 0xdeadbeefu);
  EXPECT_EQ(q.scheduled(), 1u);
}

TEST(Rng, SameSeedSameStreamDifferentSeedDifferentStream) {
  Rng a(1, 2), b(1, 2), c(1, 3), d(2, 2);
  int same_c = 0, same_d = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next();
    ASSERT_EQ(x, b.next());
    same_c += x == c.next();
    same_d += x == d.next();
  }
  EXPECT_EQ(same_c, 0);
  EXPECT_EQ(same_d, 0);
}

TEST(Rng, UniformAndBelowStayInRange) {
  Rng r(11);
  double sum = 0;
  std::vector<int> hist(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    const uint64_t k = r.below(10);
    ASSERT_LT(k, 10u);
    ++hist[k];
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
  for (int h : hist)
    EXPECT_NEAR(h, 10000, 500);
}

TEST(Rng, ChanceMatchesProbability) {
  Rng r(5);
  EXPECT_EQ(probability_threshold(0.0), 0u);
  EXPECT_FALSE(r.chance(probability_threshold(0.0)));
  int hits = 0;
  const uint64_t th = probability_threshold(0.01);
  for (int i = 0; i < 1000000; ++i)
    hits += r.chance(th);
  // Binomial sd ~ 99.5: five sigma.
  EXPECT_NEAR(hits, 10000, 500);
}
