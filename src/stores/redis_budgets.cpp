#include <spdlog/spdlog.h>

#include <charconv>

#include "stores/argument_checks.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"

namespace toolport::stores {

namespace {

// Check-and-add in one step: granted only if used + amount <= limit.
//   KEYS[1] the scope's counter;  ARGV amount, limit, ttl_ms;  returns {granted 0/1, used}
constexpr const char* reserve_script = R"lua(
local current = redis.call('GET', KEYS[1])
local used = 0
if current then
  used = tonumber(current)
  if not used then return redis.error_reply('ERR toolport budget counter is not a number') end
end
if used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return {0, used} end
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, total}
)lua";

// Replaces a reservation with the real figure: adds actual - reserved, never below 0.
//   KEYS[1] the scope's counter;  ARGV delta, ttl_ms;  returns the new total
constexpr const char* settle_script = R"lua(
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
if total < 0 then
  redis.call('SET', KEYS[1], '0')
  total = 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return total
)lua";

std::optional<std::int64_t> read_integer_string(const std::string& text) {
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string what_came(const RedisReply& reply) { return reply.is_error() ? reply.text : "an unexpected shape"; }

}  // namespace

RedisBudgets::RedisBudgets(std::shared_ptr<RedisClient> client, std::string key_prefix,
                           std::unique_ptr<LocalBudgets> fallback)
    : client_(std::move(client)),
      prefix_(std::move(key_prefix) + "budget:"),
      fallback_(std::move(fallback)),
      reserve_script_(reserve_script),
      settle_script_(settle_script) {}

StoreState RedisBudgets::state() const { return client_->ready() ? StoreState::available : StoreState::degraded; }

Task<BudgetReservation> RedisBudgets::reserve(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                              std::chrono::milliseconds ttl) {
    return reserve_copy(scope, amount, limit, ttl);
}

Task<std::int64_t> RedisBudgets::settle(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                                        std::chrono::milliseconds ttl) {
    return settle_copy(scope, reserved, actual, ttl);
}

Task<std::int64_t> RedisBudgets::used(const std::string& scope) { return used_copy(scope); }

Task<BudgetReservation> RedisBudgets::reserve_copy(std::string scope, std::int64_t amount, std::int64_t limit,
                                                   std::chrono::milliseconds ttl) {
    check_reservation(amount, ttl);
    if (!client_->ready()) co_return fallback_->reserve_now(scope, amount, limit, ttl);
    std::optional<RedisReply> reply;
    try {
        reply = co_await reserve_script_.run(*client_, {prefix_ + scope},
                                             {std::to_string(amount), std::to_string(limit),
                                              std::to_string(clamp_duration(ttl).count())});
    } catch (const RedisUnavailable&) {}
    if (!reply) co_return fallback_->reserve_now(scope, amount, limit, ttl);
    if (reply->is_array() && reply->elements.size() == 2 && reply->elements[0].is_integer() &&
        reply->elements[1].is_integer()) {
        co_return BudgetReservation{reply->elements[0].integer == 1, reply->elements[1].integer, limit};
    }
    spdlog::warn("Redis budget reserve answered \"{}\"; reserving in the local fallback", what_came(*reply));
    co_return fallback_->reserve_now(scope, amount, limit, ttl);
}

Task<std::int64_t> RedisBudgets::settle_copy(std::string scope, std::int64_t reserved, std::int64_t actual,
                                             std::chrono::milliseconds ttl) {
    check_settlement(reserved, actual, ttl);
    if (!client_->ready()) co_return fallback_->settle_now(scope, reserved, actual, ttl);
    std::optional<RedisReply> reply;
    try {
        // Both are >= 0, so the difference cannot overflow.
        reply = co_await settle_script_.run(*client_, {prefix_ + scope},
                                            {std::to_string(actual - reserved),
                                             std::to_string(clamp_duration(ttl).count())});
    } catch (const RedisUnavailable&) {}
    if (!reply) co_return fallback_->settle_now(scope, reserved, actual, ttl);
    if (reply->is_integer()) co_return reply->integer;
    spdlog::warn("Redis budget settle answered \"{}\"; settling in the local fallback", what_came(*reply));
    co_return fallback_->settle_now(scope, reserved, actual, ttl);
}

Task<std::int64_t> RedisBudgets::used_copy(std::string scope) {
    if (!client_->ready()) co_return fallback_->used_now(scope);
    std::optional<RedisReply> reply;
    try {
        reply = co_await client_->command({"GET", prefix_ + scope});
    } catch (const RedisUnavailable&) {}
    if (!reply) co_return fallback_->used_now(scope);
    if (reply->is_nil()) co_return 0;
    if (reply->is_string()) {
        if (auto value = read_integer_string(reply->text)) co_return *value;
    }
    spdlog::warn("Redis budget GET answered {}; reading the local fallback",
                 reply->is_error() ? "\"" + reply->text + "\"" : std::string("a value that is not a number"));
    co_return fallback_->used_now(scope);
}

}  // namespace toolport::stores
