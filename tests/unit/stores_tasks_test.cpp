// The task stores: one contract both MemoryTaskStore (on the fake clock) and RedisTaskStore
// (against a real redis-server on a free loopback port) must keep, then what only one of
// them does: the memory store's sweep and caps; Redis's keys and TTLs, two replicas
// racing to finish one task, and the fallback while Redis is away.
// The Redis cases are skipped only when /usr/bin/redis-server is not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "async/asio_executor.hpp"
#include "manual_executor.hpp"
#include "stores/memory_task_store.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"
#include "stores/task_cursor.hpp"
#include "stores_redis_support.hpp"
#include "stores_test_support.hpp"

using namespace toolport;
using namespace toolport::stores;
using namespace std::chrono_literals;

namespace {

std::int64_t wall_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// A record as the protocol layer would create it: working, stamped with the wall clock
// (Redis expires it on its own clock, from created_at_ms).
TaskRecord record(std::string id, std::string owner, std::int64_t ttl_ms = 60000, std::int64_t created_at_ms = 0) {
    TaskRecord r;
    r.id = std::move(id);
    r.owner = std::move(owner);
    r.created_at_ms = created_at_ms ? created_at_ms : wall_now_ms();
    r.last_updated_at_ms = r.created_at_ms;
    r.ttl_ms = ttl_ms;
    r.poll_interval_ms = 500;
    r.method = "tools/call";
    r.params = {{"name", "slow"}, {"arguments", {{"n", 3}}}};
    return r;
}

TaskRecord finished(const TaskRecord& base, TaskStatus status) {
    TaskRecord change = base;
    change.status = status;
    change.last_updated_at_ms = base.created_at_ms + 10;
    if (status == TaskStatus::completed)
        change.result = {{"content", nlohmann::json::array({{{"type", "text"}, {"text", "done"}}})}};
    if (status == TaskStatus::failed) change.error = {{"code", -32603}, {"message", "boom"}};
    if (status == TaskStatus::cancelled) change.status_message = "cancelled by the client";
    return change;
}

// Assigned outside the typed tests: clang 14 (-O0, ASan) leaks the old value when a typed
// test's body assigns a braced list over a json that holds one.
// What Lua's cjson would lose on the way: an empty array, an empty object, a 17-digit
// integer, a fraction, escapes and non-ASCII text.
TaskRecord with_awkward_params(TaskRecord r) {
    r.params = {{"name", "echo"},
                {"arguments",
                 {{"list", nlohmann::json::array()},
                  {"map", nlohmann::json::object()},
                  {"big", 12345678901234567LL},
                  {"pi", 3.14159265358979},
                  {"text", "a\"b\\c\nd é 漢"}}}};
    return r;
}

nlohmann::json tampered_params() { return {{"name", "tampered"}}; }

std::vector<std::string> ids_of(const TaskPage& page) {
    std::vector<std::string> ids;
    for (const auto& t : page.tasks) ids.push_back(t.id);
    return ids;
}

// The in-process store on the fake clock: everything completes synchronously.
class MemoryHarness {
public:
    static std::string skip_reason() { return ""; }
    void open(std::size_t max_per_owner = 1000, std::size_t max_records = 100000) {
        store_ = std::make_unique<MemoryTaskStore>(exec_, MemoryTaskStore::Limits{max_records, max_per_owner});
    }
    TaskStore& store() { return *store_; }
    MemoryTaskStore& memory() { return *store_; }
    template <typename T>
    T run(Task<T> task) {
        return test_support::finish_now(std::move(task));
    }
    void run(Task<void> task) { test_support::finish_now(std::move(task)); }
    void drive_until(const std::function<bool()>& done) {
        exec_.run();
        ASSERT_TRUE(done());
    }
    void pass(std::chrono::milliseconds time) { exec_.advance(time); }

private:
    test_support::ManualExecutor exec_;
    std::unique_ptr<MemoryTaskStore> store_;
};

// RedisTaskStore on its own connection to a fresh redis-server, on a real event loop and
// real time.
class RedisHarness {
public:
    static std::string skip_reason() {
        return test_support::redis_server_installed() ? "" : "/usr/bin/redis-server is not installed";
    }
    RedisHarness() {
        if (!skip_reason().empty()) return;
        server_ = std::make_unique<test_support::RedisServerProcess>();
        server_->start();
    }
    // Clients destroyed with a command in flight complete it through the loop: run it once
    // more so nothing stays suspended.
    ~RedisHarness() {
        replicas_.clear();
        inspector_.reset();
        io_.restart();
        io_.poll();
    }

    void open(std::size_t max_per_owner = 1000) { primary_ = &replica(max_per_owner); }
    TaskStore& store() { return *primary_; }
    RedisTaskStore& redis_store() { return *primary_; }

    // Another store on a connection of its own, as another replica would have.
    RedisTaskStore& replica(std::size_t max_per_owner = 1000, std::chrono::milliseconds timeout = 2000ms) {
        auto client = std::make_shared<RedisClient>(exec_,
                                                    RedisClient::Options{.endpoint = parse_redis_url(server_->url()),
                                                                         .command_timeout = timeout,
                                                                         .reconnect_interval = 100ms});
        client->start();
        auto store = std::make_unique<RedisTaskStore>(client, "toolport:", max_per_owner,
                                                      std::make_unique<MemoryTaskStore>(exec_));
        EXPECT_TRUE(test_support::run_until(io_, [&] { return store->state() == StoreState::available; }))
            << "the task store never connected to Redis";
        replicas_.push_back(std::move(store));
        return *replicas_.back();
    }

    template <typename T>
    T run(Task<T> task) {
        return test_support::run_task(io_, std::move(task));
    }
    void run(Task<void> task) { test_support::run_task(io_, std::move(task)); }
    void drive_until(const std::function<bool()>& done) { ASSERT_TRUE(test_support::run_until(io_, done)); }
    void pass(std::chrono::milliseconds time) { test_support::run_for(io_, time); }
    bool wait_for_state(RedisTaskStore& store, StoreState state) {
        return test_support::run_until(io_, [&] { return store.state() == state; });
    }

    // A connection of its own, to look at (and tamper with) what the stores keep.
    RedisReply redis(std::vector<std::string> args) {
        if (!inspector_) {
            inspector_ = std::make_shared<RedisClient>(exec_,
                                                       RedisClient::Options{.endpoint = parse_redis_url(server_->url()),
                                                                            .command_timeout = 2000ms,
                                                                            .reconnect_interval = 100ms});
            inspector_->start();
        }
        EXPECT_TRUE(test_support::run_until(io_, [&] { return inspector_->ready(); }));
        return test_support::run_task(io_, inspector_->command(std::move(args)));
    }
    void drop_inspector() { inspector_.reset(); }
    test_support::RedisServerProcess& server() { return *server_; }
    AsioExecutor& executor() { return exec_; }

private:
    boost::asio::io_context io_;
    AsioExecutor exec_{io_};
    std::unique_ptr<test_support::RedisServerProcess> server_;
    std::vector<std::unique_ptr<RedisTaskStore>> replicas_;
    std::shared_ptr<RedisClient> inspector_;
    RedisTaskStore* primary_ = nullptr;
};

// ---------------------------------------------------------------------------------------
// The contract, run against both stores.

template <typename Harness>
class StoresTaskContract : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = Harness::skip_reason(); !why.empty()) GTEST_SKIP() << why;
        h = std::make_unique<Harness>();
        h->open();
    }
    void TearDown() override { h.reset(); }

    TaskStore& store() { return h->store(); }
    std::optional<TaskRecord> get(const std::string& id, const std::string& owner) {
        return h->run(store().get(id, owner));
    }
    TaskUpdate update(const TaskRecord& change) { return h->run(store().update(change)); }
    TaskPage list(const std::string& owner, const std::string& cursor, std::size_t limit) {
        return h->run(store().list(owner, cursor, limit));
    }

    std::unique_ptr<Harness> h;
};

using Harnesses = ::testing::Types<MemoryHarness, RedisHarness>;
class HarnessNames {
public:
    template <typename T>
    static std::string GetName(int) {
        return std::is_same_v<T, MemoryHarness> ? "Memory" : "Redis";
    }
};
TYPED_TEST_SUITE(StoresTaskContract, Harnesses, HarnessNames);

TYPED_TEST(StoresTaskContract, ARecordComesBackWholeToItsOwner) {
    auto r = with_awkward_params(record("3f2a9c4e8b7d6a5f4e3d2c1b0a998877", "token:alice"));
    r.status_message = "started";
    r.model = "2025-11-25";
    this->h->run(this->store().create(r));

    auto got = this->get(r.id, "token:alice");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->to_json(), r.to_json());
    EXPECT_EQ(got->params["arguments"]["list"], nlohmann::json::array());
    EXPECT_EQ(got->params["arguments"]["big"], nlohmann::json(12345678901234567LL));
    EXPECT_EQ(this->get("0000000000000000000000000000dead", "token:alice"), std::nullopt);
}

TYPED_TEST(StoresTaskContract, UnfinishedListsEveryOwnersRunningRecordsNewestFirst) {
    const auto base = wall_now_ms();
    auto old = record("0001aaaa", "token:alice", 60000, base - 3000);
    auto waiting = record("0002bbbb", "session:s1", 60000, base - 2000);
    auto done = record("0003cccc", "token:bob", 60000, base - 1000);
    auto newest = record("0004dddd", "token:bob", 60000, base);
    for (const auto* r : {&old, &waiting, &done, &newest}) this->h->run(this->store().create(*r));
    auto asks = finished(waiting, TaskStatus::input_required);
    ASSERT_EQ(this->update(asks), TaskUpdate::applied);
    ASSERT_EQ(this->update(finished(done, TaskStatus::completed)), TaskUpdate::applied);

    auto ids = [](const std::vector<TaskRecord>& records) {
        std::vector<std::string> out;
        for (const auto& r : records) out.push_back(r.id);
        return out;
    };
    auto all = this->h->run(this->store().unfinished(10));
    // Of every owner; the completed one is not listed; the one waiting for input is.
    EXPECT_EQ(ids(all), (std::vector<std::string>{"0004dddd", "0002bbbb", "0001aaaa"}));
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[1].status, TaskStatus::input_required);
    EXPECT_EQ(all[1].owner, "session:s1");
    EXPECT_EQ(ids(this->h->run(this->store().unfinished(2))), (std::vector<std::string>{"0004dddd", "0002bbbb"}));
    // A cancelled one leaves the list too.
    ASSERT_EQ(this->update(finished(newest, TaskStatus::cancelled)), TaskUpdate::applied);
    EXPECT_EQ(ids(this->h->run(this->store().unfinished(10))), (std::vector<std::string>{"0002bbbb", "0001aaaa"}));
}

TYPED_TEST(StoresTaskContract, AnotherOwnerSeesNothingAndChangesNothing) {
    auto r = record("a1b2c3d4e5f60718293a4b5c6d7e8f90", "token:alice");
    this->h->run(this->store().create(r));

    EXPECT_EQ(this->get(r.id, "token:mallory"), std::nullopt);
    EXPECT_TRUE(this->list("token:mallory", "", 10).tasks.empty());
    auto theft = finished(r, TaskStatus::cancelled);
    theft.owner = "token:mallory";
    EXPECT_EQ(this->update(theft), TaskUpdate::not_found);

    auto still = this->get(r.id, "token:alice");
    ASSERT_TRUE(still.has_value());
    EXPECT_EQ(still->status, TaskStatus::working);
    EXPECT_EQ(ids_of(this->list("token:alice", "", 10)), std::vector<std::string>{r.id});
}

TYPED_TEST(StoresTaskContract, ListsNewestFirstInPagesThatFollowTheCursor) {
    const auto base = wall_now_ms();
    // Two records share a millisecond: the id decides between them, descending.
    const std::vector<std::pair<std::string, std::int64_t>> made = {{"0001aaaa", base - 5000},
                                                                    {"0002bbbb", base - 4000},
                                                                    {"0003cccc", base - 3000},
                                                                    {"0004dddd", base - 3000},
                                                                    {"0005eeee", base - 1000}};
    for (const auto& [id, created] : made) this->h->run(this->store().create(record(id, "session:s1", 60000, created)));
    this->h->run(this->store().create(record("0009ffff", "session:other", 60000, base)));

    auto first = this->list("session:s1", "", 2);
    EXPECT_EQ(ids_of(first), (std::vector<std::string>{"0005eeee", "0004dddd"}));
    ASSERT_FALSE(first.next_cursor.empty());
    auto second = this->list("session:s1", first.next_cursor, 2);
    EXPECT_EQ(ids_of(second), (std::vector<std::string>{"0003cccc", "0002bbbb"}));
    ASSERT_FALSE(second.next_cursor.empty());
    auto third = this->list("session:s1", second.next_cursor, 2);
    EXPECT_EQ(ids_of(third), (std::vector<std::string>{"0001aaaa"}));
    EXPECT_TRUE(third.next_cursor.empty());

    // A page that ends exactly at the last record says there is no more.
    auto whole = this->list("session:s1", "", 5);
    EXPECT_EQ(whole.tasks.size(), 5u);
    EXPECT_TRUE(whole.next_cursor.empty());
    // A limit of 0 counts as 1.
    EXPECT_EQ(ids_of(this->list("session:s1", "", 0)), std::vector<std::string>{"0005eeee"});
}

TYPED_TEST(StoresTaskContract, ACursorNoListHandedOutIsRefused) {
    this->h->run(this->store().create(record("0001aaaa", "session:s1")));
    for (const char* bad : {"garbage", ":id", "12:", "x12:id", "12"}) {
        EXPECT_THROW(this->list("session:s1", bad, 10), std::invalid_argument) << bad;
    }
}

TYPED_TEST(StoresTaskContract, AnUpdateReplacesTheStateAndKeepsTheRest) {
    auto r = record("77aa66bb55cc44dd33ee22ff11009988", "token:alice");
    r.model = "2025-11-25";
    this->h->run(this->store().create(r));

    auto asking = r;
    asking.status = TaskStatus::input_required;
    asking.status_message = "which file?";
    asking.input_requests = {{"elicit-1", {{"method", "elicitation/create"}}}};
    asking.last_updated_at_ms = r.created_at_ms + 5;
    asking.params = tampered_params();  // not the update's business: kept as created
    asking.ttl_ms = 1;
    EXPECT_EQ(this->update(asking), TaskUpdate::applied);

    auto got = this->get(r.id, "token:alice");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->status, TaskStatus::input_required);
    EXPECT_EQ(got->status_message, "which file?");
    EXPECT_EQ(got->input_requests, asking.input_requests);
    EXPECT_EQ(got->last_updated_at_ms, r.created_at_ms + 5);
    EXPECT_EQ(got->params, r.params);
    EXPECT_EQ(got->ttl_ms, r.ttl_ms);
    EXPECT_EQ(got->created_at_ms, r.created_at_ms);
    EXPECT_EQ(got->method, "tools/call");
    EXPECT_EQ(got->model, "2025-11-25");

    // Back to working, then completed: both applied while the record is not terminal.
    auto working = r;
    working.last_updated_at_ms = r.created_at_ms + 6;
    EXPECT_EQ(this->update(working), TaskUpdate::applied);
    auto done = finished(r, TaskStatus::completed);
    EXPECT_EQ(this->update(done), TaskUpdate::applied);
    got = this->get(r.id, "token:alice");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->status, TaskStatus::completed);
    EXPECT_EQ(got->result, done.result);
    EXPECT_EQ(got->input_requests, nlohmann::json());

    EXPECT_EQ(this->update(finished(record("ffff", "token:alice"), TaskStatus::failed)), TaskUpdate::not_found);
}

TYPED_TEST(StoresTaskContract, ATerminalRecordNeverChangesAgain) {
    for (TaskStatus first : {TaskStatus::completed, TaskStatus::failed, TaskStatus::cancelled}) {
        auto r = record("1234abcd" + std::string(to_string(first)), "token:alice");
        this->h->run(this->store().create(r));
        EXPECT_EQ(this->update(finished(r, first)), TaskUpdate::applied);
        for (TaskStatus then : {TaskStatus::working, TaskStatus::input_required, TaskStatus::completed,
                                TaskStatus::failed, TaskStatus::cancelled}) {
            EXPECT_EQ(this->update(finished(r, then)), TaskUpdate::terminal)
                << to_string(first) << " then " << to_string(then);
        }
        auto got = this->get(r.id, "token:alice");
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(got->status, first);
        EXPECT_EQ(got->to_json(), finished(r, first).to_json());
    }
}

TYPED_TEST(StoresTaskContract, ACancellationRacingTheCompletionHasOneWinner) {
    auto r = record("9e8d7c6b5a49382716051f2e3d4c5b6a", "token:alice");
    this->h->run(this->store().create(r));
    std::optional<TaskUpdate> cancelled, completed;
    spawn(this->store().update(finished(r, TaskStatus::cancelled)),
          [&](std::optional<TaskUpdate> u, std::exception_ptr) { cancelled = u; });
    spawn(this->store().update(finished(r, TaskStatus::completed)),
          [&](std::optional<TaskUpdate> u, std::exception_ptr) { completed = u; });
    this->h->drive_until([&] { return cancelled.has_value() && completed.has_value(); });
    ASSERT_TRUE(cancelled && completed);

    // Both were sent before either was answered; the one that reached the store first won.
    EXPECT_EQ(*cancelled, TaskUpdate::applied);
    EXPECT_EQ(*completed, TaskUpdate::terminal);
    auto got = this->get(r.id, "token:alice");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->status, TaskStatus::cancelled);
    EXPECT_EQ(got->result, nlohmann::json());
}

TYPED_TEST(StoresTaskContract, RecordsExpireTtlAfterCreationAndUpdatesDoNotExtendIt) {
    auto short_lived = record("5555aaaa", "token:alice", 300);
    auto updated = record("6666bbbb", "token:alice", 700);
    auto long_lived = record("7777cccc", "token:alice", 60000);
    for (const auto& r : {short_lived, updated, long_lived}) this->h->run(this->store().create(r));

    this->h->pass(150ms);
    ASSERT_TRUE(this->get(short_lived.id, "token:alice").has_value());
    auto progress = updated;
    progress.status_message = "half way";
    ASSERT_EQ(this->update(progress), TaskUpdate::applied);

    this->h->pass(300ms);  // 450 ms: the 300 ms record is gone
    EXPECT_EQ(this->get(short_lived.id, "token:alice"), std::nullopt);
    EXPECT_EQ(this->update(finished(short_lived, TaskStatus::completed)), TaskUpdate::not_found);
    EXPECT_TRUE(this->get(updated.id, "token:alice").has_value());

    this->h->pass(400ms);  // 850 ms: past the 700 ms of the one updated at 150 ms
    EXPECT_EQ(this->get(updated.id, "token:alice"), std::nullopt);
    EXPECT_EQ(ids_of(this->list("token:alice", "", 10)), std::vector<std::string>{long_lived.id});
}

TYPED_TEST(StoresTaskContract, CreateRefusesTakenIdsAndIncompleteRecords) {
    auto r = record("abcdef0123456789", "token:alice");
    this->h->run(this->store().create(r));
    auto again = record("abcdef0123456789", "token:bob");
    EXPECT_THROW(this->h->run(this->store().create(again)), std::invalid_argument);
    EXPECT_EQ(this->get(r.id, "token:bob"), std::nullopt);  // the first one stands

    auto no_id = record("", "token:alice");
    EXPECT_THROW(this->h->run(this->store().create(no_id)), std::invalid_argument);
    auto no_owner = record("0102", "");
    EXPECT_THROW(this->h->run(this->store().create(no_owner)), std::invalid_argument);
    auto no_ttl = record("0103", "token:alice", 0);
    EXPECT_THROW(this->h->run(this->store().create(no_ttl)), std::invalid_argument);
    EXPECT_EQ(ids_of(this->list("token:alice", "", 10)), std::vector<std::string>{r.id});
}

TYPED_TEST(StoresTaskContract, AnOwnerAtItsCapIsRefusedUntilARecordExpires) {
    this->h->open(/*max_per_owner=*/2);
    this->h->run(this->store().create(record("cap-1", "token:alice", 300)));
    this->h->run(this->store().create(record("cap-2", "token:alice", 60000)));
    EXPECT_THROW(this->h->run(this->store().create(record("cap-3", "token:alice"))), TaskLimitReached);
    this->h->run(this->store().create(record("cap-other", "token:bob")));  // owners are counted apart
    EXPECT_EQ(this->get("cap-3", "token:alice"), std::nullopt);

    this->h->pass(400ms);  // cap-1 has expired: room for one
    this->h->run(this->store().create(record("cap-3", "token:alice")));
    EXPECT_TRUE(this->get("cap-3", "token:alice").has_value());
    EXPECT_THROW(this->h->run(this->store().create(record("cap-4", "token:alice"))), TaskLimitReached);
}

// ---------------------------------------------------------------------------------------
// Shared pieces.

TEST(StoresTaskRecord, StatusesReadBackByTheirMcpNames) {
    for (TaskStatus s : {TaskStatus::working, TaskStatus::input_required, TaskStatus::completed, TaskStatus::failed,
                         TaskStatus::cancelled}) {
        EXPECT_EQ(task_status_from(to_string(s)), s);
    }
    EXPECT_EQ(to_string(TaskStatus::input_required), "input_required");
    EXPECT_EQ(to_string(TaskStatus::cancelled), "cancelled");
    EXPECT_EQ(task_status_from("canceled"), std::nullopt);
    EXPECT_EQ(task_status_from(""), std::nullopt);
    EXPECT_FALSE(is_terminal(TaskStatus::working));
    EXPECT_FALSE(is_terminal(TaskStatus::input_required));
    EXPECT_TRUE(is_terminal(TaskStatus::failed));
}

TEST(StoresTaskRecord, JsonRoundTripsAndRefusesWhatIsNotARecord) {
    auto r = finished(record("id-1", "session:s", 1000, 1700000000000), TaskStatus::failed);
    auto j = r.to_json();
    EXPECT_EQ(j["status"], "failed");
    EXPECT_EQ(j["created_at_ms"], 1700000000000);
    EXPECT_EQ(j["error"]["code"], -32603);
    EXPECT_EQ(TaskRecord::from_json(j).to_json(), j);

    EXPECT_THROW(TaskRecord::from_json(nlohmann::json::array()), std::invalid_argument);
    auto no_status = j;
    no_status.erase("status");
    EXPECT_THROW(TaskRecord::from_json(no_status), std::invalid_argument);
    auto bad_status = j;
    bad_status["status"] = "sleeping";
    EXPECT_THROW(TaskRecord::from_json(bad_status), std::invalid_argument);
    auto bad_time = j;
    bad_time["ttl_ms"] = "1000";
    EXPECT_THROW(TaskRecord::from_json(bad_time), std::invalid_argument);
    auto no_result = j;
    no_result.erase("result");  // the JSON members may be absent: null
    EXPECT_EQ(TaskRecord::from_json(no_result).result, nlohmann::json());
    // The task model: kept, and empty (the 2026-07-28 extension) in records written before it.
    r.model = "2025-11-25";
    EXPECT_EQ(TaskRecord::from_json(r.to_json()).model, "2025-11-25");
    auto no_model = r.to_json();
    no_model.erase("model");
    EXPECT_EQ(TaskRecord::from_json(no_model).model, "");
    auto bad_model = r.to_json();
    bad_model["model"] = 1;
    EXPECT_THROW(TaskRecord::from_json(bad_model), std::invalid_argument);
}

TEST(StoresTaskRecord, CursorsRoundTrip) {
    TaskCursor c{1700000000123, "abc:def"};
    EXPECT_EQ(c.encode(), "1700000000123:abc:def");
    auto back = TaskCursor::parse(c.encode());
    EXPECT_EQ(back.created_at_ms, 1700000000123);
    EXPECT_EQ(back.id, "abc:def");
    EXPECT_TRUE(back.precedes(1700000000122, "zzz"));
    EXPECT_TRUE(back.precedes(1700000000123, "abc:dee"));
    EXPECT_FALSE(back.precedes(1700000000123, "abc:def"));
    EXPECT_FALSE(back.precedes(1700000000124, "a"));
}

// ---------------------------------------------------------------------------------------
// MemoryTaskStore only.

class StoresMemoryTasks : public ::testing::Test {
protected:
    test_support::ManualExecutor exec;
};

TEST_F(StoresMemoryTasks, ExpiredRecordsLeaveMemoryOnTheNextCreate) {
    MemoryTaskStore store(exec);
    for (int i = 0; i < 50; ++i)
        store.create_now(record("old-" + std::to_string(i), "session:" + std::to_string(i), 100));
    EXPECT_EQ(store.records(), 50u);
    EXPECT_EQ(store.owners(), 50u);
    exec.advance(101ms);
    EXPECT_EQ(store.records(), 50u);  // nothing has touched them yet
    store.create_now(record("new", "session:new", 100));
    EXPECT_EQ(store.records(), 1u);
    EXPECT_EQ(store.owners(), 1u);  // the owners' listings went with their last records

    exec.advance(101ms);
    EXPECT_EQ(store.get_now("new", "session:new"), std::nullopt);  // met expired: dropped
    EXPECT_EQ(store.records(), 0u);
    EXPECT_EQ(store.owners(), 0u);
}

TEST_F(StoresMemoryTasks, ListingDropsTheExpiredRecordsItMeets) {
    MemoryTaskStore store(exec);
    const auto base = wall_now_ms();
    store.create_now(record("a", "session:s", 100, base - 3));
    store.create_now(record("b", "session:s", 60000, base - 2));
    store.create_now(record("c", "session:s", 100, base - 1));
    exec.advance(150ms);
    auto page = store.list_now("session:s", "", 10);
    EXPECT_EQ(ids_of(page), std::vector<std::string>{"b"});
    EXPECT_TRUE(page.next_cursor.empty());
    EXPECT_EQ(store.records(), 1u);
}

TEST_F(StoresMemoryTasks, TheStoreWideCapRefusesEveryOwner) {
    MemoryTaskStore store(exec, MemoryTaskStore::Limits{3, 1000});
    store.create_now(record("r1", "session:a", 100));
    store.create_now(record("r2", "session:b"));
    store.create_now(record("r3", "session:c"));
    EXPECT_THROW(store.create_now(record("r4", "session:d")), TaskLimitReached);
    EXPECT_EQ(store.records(), 3u);
    exec.advance(100ms);  // r1 expires exactly now
    store.create_now(record("r4", "session:d"));
    EXPECT_EQ(store.records(), 3u);
    EXPECT_TRUE(store.get_now("r4", "session:d").has_value());
}

TEST_F(StoresMemoryTasks, MakeStoresServesTasksInProcess) {
    StoreOptions options;
    options.max_tasks_per_owner = 1;
    auto stores = make_stores(options, exec);
    EXPECT_EQ(stores->tasks().backend(), "memory");
    EXPECT_EQ(dynamic_cast<MemoryTaskStore&>(stores->tasks()).state(), StoreState::available);
    test_support::finish_now(stores->tasks().create(record("m1", "session:s")));
    EXPECT_THROW(test_support::finish_now(stores->tasks().create(record("m2", "session:s"))), TaskLimitReached);
}

// ---------------------------------------------------------------------------------------
// RedisTaskStore only.

class StoresRedisTasks : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = RedisHarness::skip_reason(); !why.empty()) GTEST_SKIP() << why;
        h = std::make_unique<RedisHarness>();
    }
    void TearDown() override { h.reset(); }

    std::unique_ptr<RedisHarness> h;
};

TEST_F(StoresRedisTasks, ARunnerIsAliveWhileItsStoreRenewsItsHeartbeat) {
    auto& a = h->replica();
    auto& b = h->replica();
    EXPECT_NE(a.runner_id(), b.runner_id());
    EXPECT_EQ(a.runner_id().size(), 16u);
    a.start_heartbeat(h->executor(), 100ms);
    h->pass(150ms);
    auto ttl = h->redis({"PTTL", "toolport:runner:" + a.runner_id()});
    EXPECT_GT(ttl.integer, 0);
    EXPECT_LE(ttl.integer, 500);  // five beats: a process that stops beating is gone soon
    EXPECT_TRUE(h->run(b.runner_alive(a.runner_id())));
    EXPECT_FALSE(h->run(b.runner_alive("0123456789abcdef")));  // nobody renews it
    EXPECT_TRUE(h->run(b.runner_alive(b.runner_id())));        // itself, without asking
    EXPECT_TRUE(h->run(b.runner_alive("")));                   // records from before runners
    // A record keeps its runner.
    auto r = record("0a1b2c3d4e99", "token:alice", 5000);
    r.runner = a.runner_id();
    h->run(a.create(r));
    EXPECT_EQ(h->run(b.get(r.id, "token:alice"))->runner, a.runner_id());
}

TEST_F(StoresRedisTasks, RecordsAndListingsLiveUnderThePrefixWithTheRecordsTtl) {
    h->open();
    // Lifetimes of tens of seconds: a record created already expired (a slow sanitizer run
    // under load taking longer than a short lifetime) would be refused, not stored.
    auto r = record("0a1b2c3d4e5f", "token:alice", 60000);
    h->run(h->store().create(r));

    auto raw = h->redis({"GET", "toolport:task:" + r.id});
    ASSERT_TRUE(raw.is_string());
    EXPECT_EQ(TaskRecord::from_json(nlohmann::json::parse(raw.text)).to_json(), r.to_json());
    auto expire_at = h->redis({"PEXPIRETIME", "toolport:task:" + r.id});
    ASSERT_TRUE(expire_at.is_integer());
    EXPECT_EQ(expire_at.integer, r.created_at_ms + 60000);
    auto score = h->redis({"ZSCORE", "toolport:tasks:token:alice", r.id});
    ASSERT_TRUE(score.is_string());
    EXPECT_EQ(score.text, std::to_string(r.created_at_ms));
    EXPECT_EQ(h->redis({"PEXPIRETIME", "toolport:tasks:token:alice"}).integer, r.created_at_ms + 60000);
    EXPECT_EQ(h->redis({"EXISTS", "toolport:task:" + r.id}).integer, 1);
    // Among every owner's unfinished records too, for the operator, kept as long.
    EXPECT_EQ(h->redis({"ZSCORE", "toolport:unfinished-tasks", r.id}).text, std::to_string(r.created_at_ms));
    EXPECT_EQ(h->redis({"PEXPIRETIME", "toolport:unfinished-tasks"}).integer, r.created_at_ms + 60000);
    EXPECT_EQ(h->redis({"DBSIZE"}).integer, 3);

    // A later-expiring record moves the listing's expiry out; an earlier one does not pull it in.
    h->run(h->store().create(record("0a1b2c3d4e60", "token:alice", 90000, r.created_at_ms)));
    EXPECT_EQ(h->redis({"PEXPIRETIME", "toolport:tasks:token:alice"}).integer, r.created_at_ms + 90000);
    h->run(h->store().create(record("0a1b2c3d4e61", "token:alice", 30000, r.created_at_ms)));
    EXPECT_EQ(h->redis({"PEXPIRETIME", "toolport:tasks:token:alice"}).integer, r.created_at_ms + 90000);

    // An update keeps the record's expiry; one that ends it takes it off the unfinished.
    EXPECT_EQ(h->run(h->store().update(finished(r, TaskStatus::completed))), TaskUpdate::applied);
    EXPECT_EQ(h->redis({"PEXPIRETIME", "toolport:task:" + r.id}).integer, r.created_at_ms + 60000);
    EXPECT_TRUE(h->redis({"ZSCORE", "toolport:unfinished-tasks", r.id}).is_nil());
    EXPECT_EQ(h->redis_store().fallback().records(), 0u);
}

TEST_F(StoresRedisTasks, ListingsForgetRecordsThatExpiredAndThenExpireThemselves) {
    h->open();
    const auto base = wall_now_ms();
    h->run(h->store().create(record("keeper", "token:alice", 60000, base - 1)));  // keeps the listing alive
    for (int i = 0; i < 3; ++i)
        h->run(h->store().create(record("gone-" + std::to_string(i), "token:alice", 200, base)));
    EXPECT_EQ(h->redis({"ZCARD", "toolport:tasks:token:alice"}).integer, 4);
    h->pass(300ms);
    EXPECT_EQ(h->redis({"ZCARD", "toolport:tasks:token:alice"}).integer, 4);  // Redis does not know they are stale
    EXPECT_EQ(ids_of(h->run(h->store().list("token:alice", "", 10))), std::vector<std::string>{"keeper"});
    auto left = h->redis({"ZRANGE", "toolport:tasks:token:alice", "0", "-1"});
    ASSERT_TRUE(left.is_array());
    ASSERT_EQ(left.elements.size(), 1u);
    EXPECT_EQ(left.elements[0].text, "keeper");

    // Left alone, a listing goes with its last record.
    h->run(h->store().create(record("brief", "token:bob", 200)));
    EXPECT_EQ(h->redis({"EXISTS", "toolport:tasks:token:bob"}).integer, 1);
    h->pass(300ms);
    EXPECT_EQ(h->redis({"EXISTS", "toolport:tasks:token:bob"}).integer, 0);
}

TEST_F(StoresRedisTasks, TwoReplicasShareRecordsAndExactlyOneFinishesEachTask) {
    auto& a = h->replica();
    auto& b = h->replica();
    constexpr int tasks = 20;
    std::vector<TaskRecord> made;
    for (int i = 0; i < tasks; ++i) {
        made.push_back(record("race-" + std::to_string(100 + i), "token:alice"));
        h->run((i % 2 ? a : b).create(made.back()));
    }
    // Each replica sees what the other created.
    auto seen = h->run(b.get(made[0].id, "token:alice"));
    ASSERT_TRUE(seen.has_value());
    EXPECT_EQ(seen->to_json(), made[0].to_json());
    EXPECT_EQ(h->run(a.list("token:alice", "", 100)).tasks.size(), static_cast<std::size_t>(tasks));

    // Replica a cancels every task while replica b completes it, all in flight at once on
    // two connections.
    std::vector<std::optional<TaskUpdate>> cancels(tasks), completions(tasks);
    int answered = 0;
    for (int i = 0; i < tasks; ++i) {
        spawn(a.update(finished(made[i], TaskStatus::cancelled)),
              [&, i](std::optional<TaskUpdate> u, std::exception_ptr) {
                  cancels[i] = u;
                  ++answered;
              });
        spawn(b.update(finished(made[i], TaskStatus::completed)),
              [&, i](std::optional<TaskUpdate> u, std::exception_ptr) {
                  completions[i] = u;
                  ++answered;
              });
    }
    h->drive_until([&] { return answered == 2 * tasks; });
    for (int i = 0; i < tasks; ++i) {
        ASSERT_TRUE(cancels[i] && completions[i]) << i;
        const bool cancel_won = *cancels[i] == TaskUpdate::applied;
        const bool completion_won = *completions[i] == TaskUpdate::applied;
        EXPECT_NE(cancel_won, completion_won) << "task " << i << ": exactly one must win";
        EXPECT_EQ(cancel_won ? *completions[i] : *cancels[i], TaskUpdate::terminal) << i;
        // Both replicas read the winner's record.
        for (auto* replica : {&a, &b}) {
            auto got = h->run(replica->get(made[i].id, "token:alice"));
            ASSERT_TRUE(got.has_value());
            EXPECT_EQ(got->status, cancel_won ? TaskStatus::cancelled : TaskStatus::completed) << i;
        }
    }
}

TEST_F(StoresRedisTasks, EachReplicaListsEveryReplicasUnfinishedTasksAndForgetsExpiredOnes) {
    auto& a = h->replica();
    auto& b = h->replica();
    h->run(a.create(record("from-a-0001", "token:alice")));
    h->run(b.create(record("from-b-0002", "token:bob", /*ttl_ms=*/300)));
    for (auto* replica : {&a, &b}) EXPECT_EQ(h->run(replica->unfinished(10)).size(), 2u);
    // The record whose runner never ended it expires; the set forgets its id when listed.
    h->pass(600ms);
    auto left = h->run(b.unfinished(10));
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].id, "from-a-0001");
    EXPECT_EQ(h->redis({"ZCARD", "toolport:unfinished-tasks"}).integer, 1);
}

TEST_F(StoresRedisTasks, WhileRedisIsAwayTasksLiveInTheFallbackAndRedisIsUsedAgainOnceBack) {
    h->open();
    auto& store = h->redis_store();
    auto on_redis = record("before-outage", "token:alice");
    h->run(store.create(on_redis));

    h->drop_inspector();
    h->server().kill();
    ASSERT_TRUE(h->wait_for_state(store, StoreState::degraded));

    // What Redis holds cannot be seen: not found, and not changed.
    EXPECT_EQ(h->run(store.get(on_redis.id, "token:alice")), std::nullopt);
    EXPECT_EQ(h->run(store.update(finished(on_redis, TaskStatus::completed))), TaskUpdate::not_found);
    // New tasks are kept, read, listed and finished locally.
    auto local = record("during-outage", "token:alice");
    h->run(store.create(local));
    EXPECT_EQ(store.fallback().records(), 1u);
    ASSERT_TRUE(h->run(store.get(local.id, "token:alice")).has_value());
    EXPECT_EQ(ids_of(h->run(store.list("token:alice", "", 10))), std::vector<std::string>{local.id});
    auto input = local;
    input.status = TaskStatus::input_required;
    EXPECT_EQ(h->run(store.update(input)), TaskUpdate::applied);

    // Redis is back (empty: it kept nothing on disk).
    h->server().start();
    ASSERT_TRUE(h->wait_for_state(store, StoreState::available));
    auto after = record("after-outage", "token:alice");
    h->run(store.create(after));
    EXPECT_EQ(h->redis({"EXISTS", "toolport:task:after-outage"}).integer, 1);
    EXPECT_EQ(store.fallback().records(), 1u);
    // The task created during the outage is still found, and finished, in the fallback.
    auto found = h->run(store.get(local.id, "token:alice"));
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->status, TaskStatus::input_required);
    EXPECT_EQ(h->run(store.update(finished(local, TaskStatus::completed))), TaskUpdate::applied);
    EXPECT_EQ(h->run(store.get(local.id, "token:alice"))->status, TaskStatus::completed);
    EXPECT_EQ(h->redis({"EXISTS", "toolport:task:during-outage"}).integer, 0);
    // Listing is Redis's again.
    EXPECT_EQ(ids_of(h->run(store.list("token:alice", "", 10))), std::vector<std::string>{after.id});
}

TEST_F(StoresRedisTasks, AHungRedisHidesItsTasksUntilItAnswersAgain) {
    auto& store = h->replica(1000, 300ms);
    auto r = record("kept-in-redis", "token:alice");
    h->run(store.create(r));

    h->server().pause();                                              // connections stay open; nothing answers
    EXPECT_EQ(h->run(store.get(r.id, "token:alice")), std::nullopt);  // timed out: the fallback
    EXPECT_EQ(store.state(), StoreState::degraded);

    h->server().resume();
    ASSERT_TRUE(h->wait_for_state(store, StoreState::available));
    auto back = h->run(store.get(r.id, "token:alice"));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->to_json(), r.to_json());
}

TEST_F(StoresRedisTasks, StartsOnTheFallbackWhenRedisIsDown) {
    h->server().kill();
    StoreOptions options;
    options.url = h->server().url();
    options.reconnect_interval = 100ms;
    boost::asio::io_context io;
    AsioExecutor exec(io);
    {
        auto stores = make_stores(options, exec);
        EXPECT_EQ(stores->tasks().backend(), "redis");
        EXPECT_EQ(dynamic_cast<RedisTaskStore&>(stores->tasks()).state(), StoreState::degraded);
        test_support::run_task(io, stores->tasks().create(record("early", "token:alice")));
        EXPECT_TRUE(test_support::run_task(io, stores->tasks().get("early", "token:alice")).has_value());
        EXPECT_EQ(dynamic_cast<RedisTaskStore&>(stores->tasks()).fallback().records(), 1u);
    }
    io.restart();
    io.poll();
}

TEST_F(StoresRedisTasks, UnreadableRecordsAndWrongTypesNeverCrash) {
    h->open();
    h->redis({"SET", "toolport:task:junk", "not json"});
    EXPECT_EQ(h->run(h->store().get("junk", "token:alice")), std::nullopt);
    EXPECT_EQ(h->run(h->store().update(finished(record("junk", "token:alice"), TaskStatus::completed))),
              TaskUpdate::not_found);
    EXPECT_EQ(h->redis({"GET", "toolport:task:junk"}).text, "not json");  // untouched

    h->redis({"HSET", "toolport:task:hash", "f", "v"});
    EXPECT_EQ(h->run(h->store().get("hash", "token:alice")), std::nullopt);  // WRONGTYPE: the fallback
    h->redis({"SET", "toolport:tasks:token:carol", "not a set"});
    EXPECT_TRUE(h->run(h->store().list("token:carol", "", 10)).tasks.empty());  // WRONGTYPE: the fallback
    EXPECT_EQ(h->redis_store().state(), StoreState::available);
}

TEST_F(StoresRedisTasks, ParamsThatNameTheTasksOwnIdAreRefused) {
    h->open();
    auto r = record("guessed", "token:alice");
    r.params = {{"a", 1}, {"id", "guessed"}, {"status", "completed"}};
    EXPECT_THROW(h->run(h->store().create(r)), std::invalid_argument);
    EXPECT_EQ(h->redis({"EXISTS", "toolport:task:guessed"}).integer, 0);
}

TEST_F(StoresRedisTasks, ScriptsAreSentAgainAfterRedisForgetsThem) {
    h->open();
    auto r = record("flushed", "token:alice");
    h->redis({"SCRIPT", "FLUSH"});
    h->run(h->store().create(r));
    h->redis({"SCRIPT", "FLUSH"});
    EXPECT_EQ(h->run(h->store().update(finished(r, TaskStatus::failed))), TaskUpdate::applied);
    EXPECT_EQ(h->redis_store().fallback().records(), 0u);
}

}  // namespace
