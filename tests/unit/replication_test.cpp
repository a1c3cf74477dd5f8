#include "core/replication.h"

#include <doctest/doctest.h>

using namespace stockctl;

TEST_CASE("the default waits for one replica where the primary has any") {
  CHECK(replicas_to_wait_for(kWaitReplicasAuto, 0) == 0);
  CHECK(replicas_to_wait_for(kWaitReplicasAuto, 1) == 1);
  CHECK(replicas_to_wait_for(kWaitReplicasAuto, 3) == 1);
}

TEST_CASE("--wait-replicas given is kept, 0 opts out") {
  CHECK(replicas_to_wait_for(0, 2) == 0);
  CHECK(replicas_to_wait_for(2, 0) == 2);
  CHECK(replicas_to_wait_for(1, 1) == 1);
}

TEST_CASE("a primary left without replicas warns only where one was expected") {
  CHECK(warn_unreplicated(kWaitReplicasAuto, 0, true));
  CHECK_FALSE(warn_unreplicated(kWaitReplicasAuto, 0, false));
  CHECK_FALSE(warn_unreplicated(kWaitReplicasAuto, 1, true));
  CHECK_FALSE(warn_unreplicated(0, 0, true));
}

TEST_CASE("the replicas a sentinel sees alive are those not down nor disconnected") {
  CHECK(sentinel_live_replicas({}) == 0);
  CHECK(sentinel_live_replicas({{"name", "a", "flags", "slave"},
                                {"name", "b", "flags", "s_down,slave,disconnected"},
                                {"name", "c", "flags", "slave,disconnected"},
                                {"name", "d", "flags", "slave,promoted"}}) == 2);
}

TEST_CASE("the sentinels' master is the answer with the highest config epoch") {
  CHECK_FALSE(sentinels_master({}).has_value());
  CHECK(sentinels_master({{"a:1", 3, "s"}}) == "a:1");
  // The first sentinel has not heard of the failover yet; the second has.
  CHECK(sentinels_master({{"old:1", 3, "s"}, {"new:2", 4, "s"}, {"new:2", 4, "s"}}) == "new:2");
  CHECK(sentinels_master({{"new:2", 4, "s"}, {"old:1", 3, "s"}}) == "new:2");
  // Agreeing sentinels: the first in the URL's order.
  CHECK(sentinels_master({{"a:1", 0, "s"}, {"b:2", 0, "s"}}) == "a:1");
}

TEST_CASE("only masters named with the highest config epoch are worth trying") {
  CHECK(sentinels_masters_to_try({}).empty());
  // Mid-failover: the old master, named with the lower epoch, is left out.
  CHECK(sentinels_masters_to_try({{"old:1", 3, "s1"}, {"new:2", 4, "s2"}, {"new:2", 4, "s3"}}) ==
        std::vector<std::string>{"new:2"});
  // Equal epochs: each address once, in the URL's order.
  CHECK(sentinels_masters_to_try({{"b:2", 0, "s1"}, {"a:1", 0, "s2"}, {"b:2", 0, "s3"}}) ==
        std::vector<std::string>{"b:2", "a:1"});
}
