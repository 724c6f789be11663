// MemoryCache: LRU eviction by bytes and by entry count, per-entry TTL on the fake clock.
#include <gtest/gtest.h>

#include "manual_executor.hpp"
#include "stores/memory_cache.hpp"
#include "stores_test_support.hpp"

using namespace toolport;
using namespace toolport::stores;
using namespace std::chrono_literals;
using test_support::finish_now;

namespace {

constexpr auto long_ttl = 60s;

TEST(StoresMemoryCache, StoresAndReturnsValuesThroughTheTaskInterface) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1024, 10);
    EXPECT_EQ(cache.backend(), "memory");
    EXPECT_EQ(cache.state(), StoreState::available);
    EXPECT_EQ(finish_now(cache.get("absent")), std::nullopt);
    finish_now(cache.put("k", "value", long_ttl));
    EXPECT_EQ(finish_now(cache.get("k")), "value");
    finish_now(cache.put("k", "newer", long_ttl));
    EXPECT_EQ(finish_now(cache.get("k")), "newer");
    EXPECT_EQ(cache.entries(), 1u);
    EXPECT_EQ(cache.bytes(), std::string("k").size() + std::string("newer").size());
}

TEST(StoresMemoryCache, ValuesAreBinarySafe) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1024, 10);
    const std::string value("a\0b\r\nc", 6);
    cache.store(std::string("key\0x", 5), value, long_ttl);
    EXPECT_EQ(cache.lookup(std::string("key\0x", 5)), value);
    EXPECT_EQ(cache.lookup("key"), std::nullopt);
}

TEST(StoresMemoryCache, EvictsTheLeastRecentlyUsedEntryOverTheEntryCount) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1 << 20, 3);
    cache.store("a", "1", long_ttl);
    cache.store("b", "2", long_ttl);
    cache.store("c", "3", long_ttl);
    EXPECT_EQ(cache.lookup("a"), "1");  // a is now the most recent; b the least
    cache.store("d", "4", long_ttl);
    EXPECT_EQ(cache.entries(), 3u);
    EXPECT_EQ(cache.lookup("b"), std::nullopt);
    EXPECT_EQ(cache.lookup("a"), "1");
    EXPECT_EQ(cache.lookup("c"), "3");
    EXPECT_EQ(cache.lookup("d"), "4");
}

TEST(StoresMemoryCache, EvictsLeastRecentlyUsedEntriesOverTheByteBound) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 30, 100);         // key + value bytes
    cache.store("k1", "12345678", long_ttl);  // 10 bytes each
    cache.store("k2", "12345678", long_ttl);
    cache.store("k3", "12345678", long_ttl);
    EXPECT_EQ(cache.bytes(), 30u);
    EXPECT_TRUE(cache.lookup("k1"));      // k2 becomes the least recent
    cache.store("k4", "1234", long_ttl);  // 6 bytes: 36 > 30, so k2 goes
    EXPECT_EQ(cache.lookup("k2"), std::nullopt);
    EXPECT_EQ(cache.bytes(), 26u);
    EXPECT_EQ(cache.entries(), 3u);
    // One large value pushes out as many old ones as it needs.
    cache.store("big", std::string(25, 'x'), long_ttl);  // 28 bytes
    EXPECT_EQ(cache.entries(), 1u);
    EXPECT_EQ(cache.bytes(), 28u);
    EXPECT_EQ(cache.lookup("big"), std::string(25, 'x'));
}

TEST(StoresMemoryCache, AValueLargerThanTheWholeBoundIsNotKeptAndDropsTheOldOne) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 16, 100);
    cache.store("k", "small", long_ttl);
    cache.store("other", "x", long_ttl);
    cache.store("k", std::string(16, 'x'), long_ttl);  // 17 bytes with the key
    EXPECT_EQ(cache.lookup("k"), std::nullopt);        // not the stale "small"
    EXPECT_EQ(cache.lookup("other"), "x");             // and nothing else was evicted for it
    EXPECT_EQ(cache.bytes(), 6u);
}

TEST(StoresMemoryCache, EntriesExpireAfterTheirOwnTtl) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1024, 10);
    cache.store("short", "s", 100ms);
    cache.store("long", "l", 500ms);
    exec.advance(99ms);
    EXPECT_EQ(cache.lookup("short"), "s");
    exec.advance(1ms);
    EXPECT_EQ(cache.lookup("short"), std::nullopt);
    EXPECT_EQ(cache.entries(), 1u);  // the expired entry was dropped when found
    EXPECT_EQ(cache.lookup("long"), "l");
    exec.advance(400ms);
    EXPECT_EQ(finish_now(cache.get("long")), std::nullopt);
    EXPECT_EQ(cache.bytes(), 0u);
}

TEST(StoresMemoryCache, StoringAgainRestartsTheTtl) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1024, 10);
    cache.store("k", "v1", 100ms);
    exec.advance(80ms);
    cache.store("k", "v2", 100ms);
    exec.advance(80ms);
    EXPECT_EQ(cache.lookup("k"), "v2");
}

TEST(StoresMemoryCache, ANonPositiveTtlStoresNothing) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1024, 10);
    cache.store("k", "v", 0ms);
    cache.store("n", "v", -5ms);
    EXPECT_EQ(cache.entries(), 0u);
    EXPECT_EQ(cache.lookup("k"), std::nullopt);
}

TEST(StoresMemoryCache, AHugeTtlDoesNotOverflowTheClock) {
    test_support::ManualExecutor exec;
    MemoryCache cache(exec, 1024, 10);
    cache.store("k", "v", std::chrono::milliseconds::max());
    exec.advance(24h);
    EXPECT_EQ(cache.lookup("k"), "v");
}

TEST(StoresMemoryCache, ABoundOfZeroKeepsNothing) {
    test_support::ManualExecutor exec;
    MemoryCache by_entries(exec, 1024, 0);
    by_entries.store("k", "v", long_ttl);
    EXPECT_EQ(by_entries.lookup("k"), std::nullopt);
    MemoryCache by_bytes(exec, 0, 10);
    by_bytes.store("k", "v", long_ttl);
    EXPECT_EQ(by_bytes.lookup("k"), std::nullopt);
}

}  // namespace
