// RedisPinStore (redis_stores.hpp says how the pins are laid out in Redis). The Lua scripts
// sit next to the C++ that calls them; each writes its hashes, the set of sources and the
// version counter in one step.
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include "async/executor.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"

namespace toolport::stores {

namespace {

// The version, then {source, pinned as HGETALL, pending as HGETALL} per source.
//   KEYS[1] version, KEYS[2] sources;  ARGV[1] "<prefix>pins:"
constexpr const char* load_script = R"lua(
local out = {redis.call('GET', KEYS[1]) or '0'}
for _, source in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  out[#out + 1] = {source, redis.call('HGETALL', ARGV[1] .. source .. ':pinned'),
                   redis.call('HGETALL', ARGV[1] .. source .. ':pending')}
end
return out
)lua";

// A listing's changes (ListingWrites), in one step:
//   - a first sight is pinned only if its key has no pin (the first replica's stays);
//   - a pending definition is not written when it is the pin already (another replica's
//     approval got there first) or is pending already;
//   - a settled key's pending definition is dropped.
// The counter moves once if anything was written.
//   KEYS[1] pinned, KEYS[2] pending, KEYS[3] sources, KEYS[4] version;
//   ARGV[1] source, ARGV[2] first sights n, ARGV[3] pending m, then n (field, value),
//   m (field, value, digest) and the settled fields;  returns the first sights not written
constexpr const char* listing_script = R"lua(
local firsts, pendings = tonumber(ARGV[2]), tonumber(ARGV[3])
local i, lost, wrote, added = 4, 0, false, false
for _ = 1, firsts do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then wrote, added = true, true else lost = lost + 1 end
  i = i + 2
end
for _ = 1, pendings do
  local same = ARGV[i + 2] .. ' '
  local pin = redis.call('HGET', KEYS[1], ARGV[i])
  local old = redis.call('HGET', KEYS[2], ARGV[i])
  if not (pin and string.sub(pin, 1, #same) == same) and not (old and string.sub(old, 1, #same) == same) then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    wrote, added = true, true
  end
  i = i + 3
end
for j = i, #ARGV do
  if redis.call('HDEL', KEYS[2], ARGV[j]) == 1 then wrote = true end
end
if added then redis.call('SADD', KEYS[3], ARGV[1]) end
if wrote then redis.call('INCR', KEYS[4]) end
return lost
)lua";

//   KEYS[1] pinned, KEYS[2] pending, KEYS[3] sources, KEYS[4] version;  ARGV field, value, source
constexpr const char* approve_script = R"lua(
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[3])
redis.call('INCR', KEYS[4])
return 1
)lua";

// ARGV[1] '' forgets the whole source.
//   KEYS[1] pinned, KEYS[2] pending, KEYS[3] sources, KEYS[4] version;  ARGV field, source;
//   returns the entries forgotten
constexpr const char* reset_script = R"lua(
local gone
if ARGV[1] == '' then
  gone = redis.call('HLEN', KEYS[1]) + redis.call('HLEN', KEYS[2])
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
else
  gone = redis.call('HDEL', KEYS[1], ARGV[1]) + redis.call('HDEL', KEYS[2], ARGV[1])
end
if gone > 0 then redis.call('INCR', KEYS[4]) end
return gone
)lua";

std::string shape_of(const RedisReply& reply) { return reply.is_error() ? reply.text : "an unexpected shape"; }

// HGETALL's flat field, value, field, value... as records (values that are not one skipped).
PinMap map_of(const RedisReply& flat) {
    PinMap out;
    for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
        const auto& field = flat.elements[i];
        const auto& value = flat.elements[i + 1];
        if (!field.is_string() || !value.is_string()) continue;
        if (auto record = pin_from_hash_value(field.text, value.text)) out.emplace(field.text, std::move(*record));
    }
    return out;
}

}  // namespace

std::string pin_hash_value(const PinRecord& record) {
    // Invalid UTF-8 is replaced rather than thrown on (a definition is an upstream's text).
    return record.digest + ' ' + record.to_json().dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<PinRecord> pin_from_hash_value(std::string_view field, std::string_view value) {
    const auto space = value.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    Json j = Json::parse(value.substr(space + 1), nullptr, /*allow_exceptions=*/false);
    auto record = PinRecord::from_json(j);
    if (!record || record->key() != field || record->digest != value.substr(0, space)) return std::nullopt;
    return record;
}

RedisPinStore::RedisPinStore(std::shared_ptr<RedisClient> client, std::string key_prefix, Executor& executor)
    : client_(std::move(client)),
      prefix_(std::move(key_prefix) + "pins:"),
      executor_(executor),
      load_script_(load_script),
      listing_script_(listing_script),
      approve_script_(approve_script),
      reset_script_(reset_script) {}

bool RedisPinStore::ready() const { return client_->ready(); }

Task<void> RedisPinStore::first_connection() {
    // Only before the client has ever connected: later, an outage answers at once.
    for (int i = 0; i < 40 && !client_->ready() && client_->connections() == 0; ++i) {
        co_await executor_.sleep(std::chrono::milliseconds(50));
    }
}

Task<RedisReply> RedisPinStore::run(const RedisScript& script, std::vector<std::string> keys,
                                    std::vector<std::string> args, std::string what) {
    co_await first_connection();
    RedisReply reply;
    try {
        reply = co_await script.run(*client_, std::move(keys), std::move(args));
    } catch (const RedisUnavailable& e) {
        throw PinStoreError(fmt::format("Redis is unreachable ({})", e.what()));
    }
    if (reply.is_error()) throw PinStoreError(fmt::format("Redis answered {} with \"{}\"", what, reply.text));
    co_return reply;
}

Task<PinSnapshot> RedisPinStore::load() {
    RedisReply reply = co_await run(load_script_, {prefix_ + "version", prefix_ + "sources"}, {prefix_}, "a read");
    if (!reply.is_array() || reply.elements.empty())
        throw PinStoreError(fmt::format("Redis answered a read of the pins with {}", shape_of(reply)));
    PinSnapshot out;
    for (std::size_t i = 1; i < reply.elements.size(); ++i) {
        const auto& entry = reply.elements[i];
        if (!entry.is_array() || entry.elements.size() != 3 || !entry.elements[0].is_string()) continue;
        SourcePins pins{map_of(entry.elements[1]), map_of(entry.elements[2])};
        if (pins.pinned.empty() && pins.pending.empty()) continue;
        out.emplace(entry.elements[0].text, std::move(pins));
    }
    co_return out;
}

Task<std::string> RedisPinStore::version() {
    co_await first_connection();
    RedisReply reply;
    try {
        reply = co_await client_->command({"GET", prefix_ + "version"});
    } catch (const RedisUnavailable& e) {
        throw PinStoreError(fmt::format("Redis is unreachable ({})", e.what()));
    }
    if (reply.is_nil()) co_return "0";
    if (!reply.is_string())
        throw PinStoreError(fmt::format("Redis answered the pins' version with {}", shape_of(reply)));
    co_return reply.text;
}

Task<std::size_t> RedisPinStore::record_listing(std::string source, ListingWrites writes) {
    if (writes.empty()) co_return 0;
    std::vector<std::string> args{source, std::to_string(writes.first_sights.size()),
                                  std::to_string(writes.pending.size())};
    args.reserve(3 + 2 * writes.first_sights.size() + 3 * writes.pending.size() + writes.settled.size());
    for (const auto& record : writes.first_sights) {
        args.push_back(record.key());
        args.push_back(pin_hash_value(record));
    }
    for (const auto& record : writes.pending) {
        args.push_back(record.key());
        args.push_back(pin_hash_value(record));
        args.push_back(record.digest);
    }
    for (auto& key : writes.settled) args.push_back(std::move(key));
    RedisReply reply = co_await run(listing_script_,
                                    {pinned_key(source), pending_key(source), prefix_ + "sources", prefix_ + "version"},
                                    std::move(args), "a listing's pins");
    if (!reply.is_integer() || reply.integer < 0) {
        throw PinStoreError("Redis answered a listing's pins with " + shape_of(reply));
    }
    co_return static_cast<std::size_t>(reply.integer);
}

Task<void> RedisPinStore::approve(std::string source, PinRecord record) {
    co_await run(approve_script_, {pinned_key(source), pending_key(source), prefix_ + "sources", prefix_ + "version"},
                 {record.key(), pin_hash_value(record), source}, "an approval");
}

Task<std::size_t> RedisPinStore::reset(std::string source, std::string key) {
    RedisReply reply = co_await run(reset_script_,
                                    {pinned_key(source), pending_key(source), prefix_ + "sources", prefix_ + "version"},
                                    {key, source}, "a reset");
    if (!reply.is_integer() || reply.integer < 0) throw PinStoreError("Redis answered a reset with " + shape_of(reply));
    co_return static_cast<std::size_t>(reply.integer);
}

}  // namespace toolport::stores
