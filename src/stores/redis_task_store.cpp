#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "stores/argument_checks.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"
#include "stores/task_cursor.hpp"
#include "util/random.hpp"

namespace toolport::stores {

namespace {

// How a record is written in Redis. It is the record's JSON (TaskRecord::from_json reads
// it), with its members in a fixed order, so that the update script can change the status
// and what follows it by splicing strings, without decoding the record: Redis's Lua cjson
// would turn [] into {} and round numbers to 14 digits in params and results.
//
//   head:   {"owner":<owner>,"created_at_ms":..,"ttl_ms":..,"poll_interval_ms":..,"method":..,"model":..,"runner":..,
//           "params":<params>
//   marker: ,"id":<id>,"status":"
//   tail:   <status>","status_message":..,"last_updated_at_ms":..,"result":..,"error":..,"input_requests":..}
//
// The head starts with the owner, so the script checks ownership with a prefix; the
// script finds the marker by its first occurrence, which is the real one because create
// refuses a head that contains it (only params could, and only by naming the record's own
// id, 128 random bits chosen after the params were).

std::string dump(const nlohmann::json& value) {
    // Invalid UTF-8 is replaced rather than thrown on: the same text always dumps the same,
    // which the owner prefix and the marker rely on.
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string owner_head(const std::string& owner) { return "{\"owner\":" + dump(owner) + ","; }

std::string id_marker(const std::string& id) { return ",\"id\":" + dump(id) + ",\"status\":\""; }

std::string head_of(const TaskRecord& r) {
    return owner_head(r.owner) + "\"created_at_ms\":" + std::to_string(r.created_at_ms) +
           ",\"ttl_ms\":" + std::to_string(r.ttl_ms) + ",\"poll_interval_ms\":" + std::to_string(r.poll_interval_ms) +
           ",\"method\":" + dump(r.method) + ",\"model\":" + dump(r.model) + ",\"runner\":" + dump(r.runner) +
           ",\"params\":" + dump(r.params);
}

std::string tail_of(const TaskRecord& r) {
    return std::string(to_string(r.status)) + "\",\"status_message\":" + dump(r.status_message) +
           ",\"last_updated_at_ms\":" + std::to_string(r.last_updated_at_ms) + ",\"result\":" + dump(r.result) +
           ",\"error\":" + dump(r.error) + ",\"input_requests\":" + dump(r.input_requests) + "}";
}

// Stores a new record and lists it under its owner and among the unfinished records of
// every owner, unless the id is taken or the owner has `cap` ids listed (the caller then
// prunes the listing and tries once more). The
// listing's expiry (and the unfinished set's) moves out to the record's when that is later,
// so each lives as long as its latest-expiring record. PEXPIREAT with GT would not do: a new set has no
// expiry, which GT counts as infinite.
//   KEYS  record, listing, unfinished;  ARGV  value, expire_at_ms, created_at_ms, id, cap
//   returns 1 stored, 0 id taken, -1 at the cap
constexpr const char* create_script = R"lua(
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
local left = redis.call('PTTL', KEYS[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
if left < 0 or now + left < tonumber(ARGV[2]) then redis.call('PEXPIREAT', KEYS[2], ARGV[2]) end
left = redis.call('PTTL', KEYS[3])
if left < 0 or now + left < tonumber(ARGV[2]) then redis.call('PEXPIREAT', KEYS[3], ARGV[2]) end
return 1
)lua";

// Replaces the status and the rest of the tail of a record that is the owner's and not
// terminal, keeping its expiry to the millisecond (KEEPTTL, Redis 6.0+: PTTL then SET PX
// moved it by a millisecond now and then, the clock having ticked between the two). A
// record that ends leaves the unfinished ones.
//   KEYS  record, unfinished;  ARGV  owner head, id marker, new tail, id
//   returns 1 applied, 0 not found (or another owner's), 2 terminal
constexpr const char* update_script = R"lua(
if redis.replicate_commands then redis.replicate_commands() end
local record = redis.call('GET', KEYS[1])
if not record then return 0 end
if string.sub(record, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
local at = string.find(record, ARGV[2], #ARGV[1], true)
if not at then return redis.error_reply('ERR toolport task record is not in the layout it was written in') end
local rest = at + #ARGV[2]
local status = string.match(record, '^[%a_]+', rest)
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
if terminal(status) then
  redis.call('ZREM', KEYS[2], ARGV[4])
  return 2
end
redis.call('SET', KEYS[1], string.sub(record, 1, rest - 1) .. ARGV[3], 'KEEPTTL')
if terminal(string.match(ARGV[3], '^[%a_]+')) then redis.call('ZREM', KEYS[2], ARGV[4]) end
return 1
)lua";

// Drops from a listing the ids whose record is gone.
//   KEYS  listing, then the record of each id;  ARGV  the ids, in the same order
//   returns the ids left
constexpr const char* prune_script = R"lua(
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then redis.call('ZREM', KEYS[1], ARGV[i - 1]) end
end
return redis.call('ZCARD', KEYS[1])
)lua";

std::string what_came(const RedisReply& reply) { return reply.is_error() ? reply.text : "an unexpected shape"; }

void check_new_record(const TaskRecord& record) {
    if (record.id.empty()) throw std::invalid_argument("a task record needs an id");
    if (record.owner.empty()) throw std::invalid_argument("a task record needs an owner");
    if (record.ttl_ms <= 0) throw std::invalid_argument("a task record needs a ttl_ms > 0");
}

// The record stored as `text`, or nullopt (with a warning) when it is not one.
std::optional<TaskRecord> read_record(const std::string& text, const std::string& key) {
    try {
        return TaskRecord::from_json(nlohmann::json::parse(text));
    } catch (const std::exception& e) {
        spdlog::warn("Redis task record {} is unreadable ({}); treated as missing", key, e.what());
        return std::nullopt;
    }
}

}  // namespace

RedisTaskStore::RedisTaskStore(std::shared_ptr<RedisClient> client, std::string key_prefix, std::size_t max_per_owner,
                               std::unique_ptr<MemoryTaskStore> fallback)
    : client_(std::move(client)),
      prefix_(std::move(key_prefix)),
      max_per_owner_(max_per_owner),
      fallback_(std::move(fallback)),
      create_script_(create_script),
      update_script_(update_script),
      prune_script_(prune_script),
      runner_id_(util::random_hex(8)) {}

void RedisTaskStore::start_heartbeat(Executor& executor, std::chrono::milliseconds every) { beat(executor, every); }

void RedisTaskStore::beat(Executor& executor, std::chrono::milliseconds every) {
    const bool ready = client_->ready();
    if (ready) {
        const auto ttl = std::to_string((every * 5).count());
        spawn(client_->command({"SET", runner_key(runner_id_), "1", "PX", ttl}),
              [](std::optional<RedisReply>, std::exception_ptr) {});
    }
    // Until Redis has heard of this process, soon again: a task it creates meanwhile must
    // not look orphaned to the other replicas.
    const auto next = ready ? every : std::min(every, std::chrono::milliseconds(50));
    executor.schedule_after(next, [this, &executor, every, alive = alive_]() {
        if (*alive) beat(executor, every);
    });
}

Task<bool> RedisTaskStore::runner_alive(std::string runner) {
    if (runner.empty() || runner == runner_id_) co_return true;
    const auto now = std::chrono::steady_clock::now();
    if (auto it = liveness_.find(runner); it != liveness_.end() && now - it->second.at < std::chrono::seconds(1)) {
        co_return it->second.alive;
    }
    auto alive = alive_;
    bool answer = true;  // Redis away: cannot tell, so alive
    auto reply = co_await ask({"EXISTS", runner_key(runner)});
    if (!*alive) co_return true;  // the store is gone
    if (reply && reply->is_integer()) {
        answer = reply->integer == 1;
        if (liveness_.size() > 1000) liveness_.clear();
        liveness_[runner] = Liveness{answer, now};
    }
    co_return answer;
}

StoreState RedisTaskStore::state() const { return client_->ready() ? StoreState::available : StoreState::degraded; }

Task<std::optional<RedisReply>> RedisTaskStore::ask(std::vector<std::string> args) {
    if (!client_->ready()) co_return std::nullopt;
    try {
        co_return co_await client_->command(std::move(args));
    } catch (const RedisUnavailable&) {}
    co_return std::nullopt;
}

Task<std::optional<RedisReply>> RedisTaskStore::ask(const RedisScript& script, std::vector<std::string> keys,
                                                    std::vector<std::string> args) {
    if (!client_->ready()) co_return std::nullopt;
    try {
        co_return co_await script.run(*client_, std::move(keys), std::move(args));
    } catch (const RedisUnavailable&) {}
    co_return std::nullopt;
}

Task<void> RedisTaskStore::create(TaskRecord record) {
    check_new_record(record);
    const std::string head = head_of(record);
    const std::string marker = id_marker(record.id);
    if (head.find(marker) != std::string::npos)
        throw std::invalid_argument("the task's params name its own id; choose another id");
    const auto ttl = clamp_duration(std::chrono::milliseconds(record.ttl_ms));
    const std::string expire_at = std::to_string(record.created_at_ms + ttl.count());
    if (record.runner == runner_id_ && client_->ready()) {
        // Sent before the record on the same connection: no replica can read the record
        // before this process's heartbeat exists (it may not have beaten yet).
        spawn(client_->command({"SET", runner_key(runner_id_), "1", "PX", "5000", "NX"}),
              [](std::optional<RedisReply>, std::exception_ptr) {});
    }
    std::vector<std::string> keys{record_key(record.id), listing_key(record.owner), unfinished_key()};
    std::vector<std::string> args{head + marker + tail_of(record), expire_at, std::to_string(record.created_at_ms),
                                  record.id, std::to_string(max_per_owner_)};

    std::optional<RedisReply> reply;
    for (int attempt = 0; attempt < 2; ++attempt) {
        reply = co_await ask(create_script_, keys, args);
        if (!reply || !reply->is_integer() || reply->integer != -1 || attempt == 1) break;
        // At the cap: some listed ids may be of records already expired.
        auto left = co_await prune(record.owner);
        if (!left) {
            reply.reset();
            break;
        }
        if (static_cast<std::size_t>(*left) >= max_per_owner_) break;
    }
    if (!reply) {
        fallback_->create_now(std::move(record));
        co_return;
    }
    if (reply->is_integer()) {
        if (reply->integer == 1) co_return;
        if (reply->integer == 0) throw std::invalid_argument("task id " + record.id + " is taken");
        if (reply->integer == -1)
            throw TaskLimitReached("this owner already has " + std::to_string(max_per_owner_) + " tasks");
    }
    spdlog::warn("Redis task create answered \"{}\"; the task is kept in the local fallback", what_came(*reply));
    fallback_->create_now(std::move(record));
}

Task<std::optional<std::int64_t>> RedisTaskStore::prune(std::string owner) {
    const std::string listing = listing_key(owner);
    auto members = co_await ask({"ZRANGE", listing, "0", "-1"});
    if (!members || !members->is_array()) co_return std::nullopt;
    std::vector<std::string> keys{listing};
    std::vector<std::string> ids;
    for (const auto& member : members->elements) {
        if (!member.is_string()) continue;
        keys.push_back(record_key(member.text));
        ids.push_back(member.text);
    }
    auto left = co_await ask(prune_script_, std::move(keys), std::move(ids));
    if (!left || !left->is_integer()) co_return std::nullopt;
    co_return left->integer;
}

Task<std::optional<TaskRecord>> RedisTaskStore::get(std::string id, std::string owner) {
    const std::string key = record_key(id);
    auto reply = co_await ask({"GET", key});
    if (!reply) co_return fallback_->get_now(id, owner);
    if (reply->is_string()) {
        auto record = read_record(reply->text, key);
        // Another owner's record answers as a missing one would: ids are not to be probed.
        if (record && record->id == id && record->owner == owner) co_return record;
        co_return std::nullopt;
    }
    if (!reply->is_nil()) spdlog::warn("Redis task GET answered \"{}\"; reading the local fallback", what_came(*reply));
    // Not in Redis: it may have been created in the fallback while Redis was away.
    co_return fallback_->get_now(id, owner);
}

Task<TaskPage> RedisTaskStore::list(std::string owner, std::string cursor, std::size_t limit) {
    const std::size_t page_size = std::max<std::size_t>(limit, 1);
    std::optional<TaskCursor> after;
    if (!cursor.empty()) after = TaskCursor::parse(cursor);
    if (!client_->ready()) co_return fallback_->list_now(owner, cursor, limit);

    // Ids come newest first (score, then id, descending: the listing's order) in batches,
    // from the cursor's score down; ids at the cursor's score up to the cursor itself are
    // skipped. One live record beyond the page says there is a next one.
    const std::string listing = listing_key(owner);
    const std::size_t batch = std::min<std::size_t>(page_size + 1, 256);
    std::vector<TaskRecord> found;
    std::vector<std::string> gone;
    for (std::size_t offset = 0; found.size() <= page_size;) {
        std::optional<RedisReply> ids;
        if (after) {
            ids = co_await ask({"ZREVRANGEBYSCORE", listing, std::to_string(after->created_at_ms), "-inf", "LIMIT",
                                std::to_string(offset), std::to_string(batch)});
        } else {
            ids = co_await ask({"ZREVRANGE", listing, std::to_string(offset), std::to_string(offset + batch - 1)});
        }
        if (!ids || !ids->is_array()) {
            if (ids) spdlog::warn("Redis task listing answered \"{}\"; listing the local fallback", what_came(*ids));
            co_return fallback_->list_now(owner, cursor, limit);
        }
        if (ids->elements.empty()) break;
        std::vector<std::string> mget{"MGET"};
        for (const auto& id : ids->elements) mget.push_back(record_key(id.text));
        auto records = co_await ask(std::move(mget));
        if (!records || !records->is_array() || records->elements.size() != ids->elements.size()) {
            if (records)
                spdlog::warn("Redis task MGET answered \"{}\"; listing the local fallback", what_came(*records));
            co_return fallback_->list_now(owner, cursor, limit);
        }
        for (std::size_t i = 0; i < ids->elements.size() && found.size() <= page_size; ++i) {
            const std::string& id = ids->elements[i].text;
            const RedisReply& text = records->elements[i];
            if (!text.is_string()) {
                gone.push_back(id);
                continue;
            }
            auto record = read_record(text.text, record_key(id));
            if (!record || record->owner != owner || record->id != id) continue;
            if (after && !after->precedes(record->created_at_ms, record->id)) continue;
            found.push_back(std::move(*record));
        }
        if (ids->elements.size() < batch) break;
        offset += batch;
    }
    if (!gone.empty()) {
        std::vector<std::string> zrem{"ZREM", listing};
        zrem.insert(zrem.end(), gone.begin(), gone.end());
        co_await ask(std::move(zrem));  // tidying only: a failure leaves them for the next time
    }

    TaskPage page;
    if (found.size() > page_size) {
        found.resize(page_size);
        page.next_cursor = TaskCursor::after(found.back()).encode();
    }
    page.tasks = std::move(found);
    co_return page;
}

Task<std::vector<TaskRecord>> RedisTaskStore::unfinished(std::size_t limit) {
    // Those kept here while Redis was away, then Redis's: newest first, in batches, until
    // `limit` are found. Ids whose record expired (its runner died before it ended, and
    // nobody looked) or ended are dropped from the set on the way.
    std::vector<TaskRecord> found = fallback_->unfinished_now(limit);
    if (!client_->ready()) co_return found;
    const std::string set = unfinished_key();
    const std::size_t batch = 256;
    std::vector<std::string> gone;
    for (std::size_t offset = 0; found.size() < limit;) {
        auto ids = co_await ask({"ZREVRANGE", set, std::to_string(offset), std::to_string(offset + batch - 1)});
        if (!ids || !ids->is_array() || ids->elements.empty()) break;
        std::vector<std::string> mget{"MGET"};
        for (const auto& id : ids->elements) mget.push_back(record_key(id.text));
        auto records = co_await ask(std::move(mget));
        if (!records || !records->is_array() || records->elements.size() != ids->elements.size()) break;
        for (std::size_t i = 0; i < ids->elements.size() && found.size() < limit; ++i) {
            const std::string& id = ids->elements[i].text;
            const RedisReply& text = records->elements[i];
            auto record = text.is_string() ? read_record(text.text, record_key(id)) : std::nullopt;
            if (!record || record->id != id || is_terminal(record->status)) {
                gone.push_back(id);
                continue;
            }
            found.push_back(std::move(*record));
        }
        if (ids->elements.size() < batch) break;
        offset += batch;
    }
    if (!gone.empty()) {
        std::vector<std::string> zrem{"ZREM", set};
        zrem.insert(zrem.end(), gone.begin(), gone.end());
        co_await ask(std::move(zrem));  // tidying only: a failure leaves them for the next time
    }
    std::stable_sort(found.begin(), found.end(), [](const TaskRecord& a, const TaskRecord& b) {
        return std::tie(a.created_at_ms, a.id) > std::tie(b.created_at_ms, b.id);
    });
    if (found.size() > limit) found.resize(limit);
    co_return found;
}

Task<TaskUpdate> RedisTaskStore::update(TaskRecord change) {
    auto reply = co_await ask(update_script_, {record_key(change.id), unfinished_key()},
                              {owner_head(change.owner), id_marker(change.id), tail_of(change), change.id});
    if (!reply) co_return fallback_->update_now(change);
    if (reply->is_integer()) {
        if (reply->integer == 1) co_return TaskUpdate::applied;
        if (reply->integer == 2) co_return TaskUpdate::terminal;
        // Not in Redis: it may have been created in the fallback while Redis was away.
        if (reply->integer == 0) co_return fallback_->update_now(change);
    }
    spdlog::warn("Redis task update answered \"{}\"; updating the local fallback", what_came(*reply));
    co_return fallback_->update_now(change);
}

}  // namespace toolport::stores
