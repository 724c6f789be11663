#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "stores/argument_checks.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"

namespace toolport::stores {

namespace {

// LocalRateLimits::decide (local_rate_limits.cpp), step for step, on Redis's clock.
// Times are whole microseconds (TIME gives them; doubles hold them exactly), written back
// with %.17g because Lua's default number-to-string keeps only 14 digits. The 1e-9 token
// and 1e-3 µs tolerances absorb floating-point noise, as locally.
//   KEYS[1]  the limit's hash: next (earliest next start), tokens, at (time of `tokens`)
//   ARGV     min_spacing_us, rate (tokens/s, 0: no bucket), burst (>= 1), max_wait_us
//   returns  {allowed 0/1, wait_us, retry_after_us}
constexpr const char* rate_limit_script = R"lua(
if redis.replicate_commands then redis.replicate_commands() end
local spacing = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

local saved = redis.call('HMGET', KEYS[1], 'next', 'tokens', 'at')
local next_start = tonumber(saved[1]) or now
local tokens = tonumber(saved[2]) or burst
local at = tonumber(saved[3]) or now

local delay = 0
if spacing > 0 and next_start > now then delay = next_start - now end
if rate > 0 and now > at then tokens = tokens + (now - at) * rate / 1000000 end
if tokens > burst then tokens = burst end

local refused = false
local retry = 0
if delay > max_wait then
  refused = true
  retry = delay - max_wait
end
if rate > 0 and tokens + 1e-9 < 1 then
  refused = true
  retry = math.max(retry, math.ceil((1 - tokens) * 1000000 / rate - 1e-3))
end
-- A year at most, as locally: a near-zero rate must not overflow the integer reply.
local longest = 31622400000000
if refused then return {0, 0, math.min(retry, longest)} end

local next_new = now
if spacing > 0 then next_new = now + delay + spacing end
local keep = next_new - now
if rate > 0 then
  tokens = tokens - 1
  keep = math.max(keep, math.ceil((burst - tokens) * 1000000 / rate - 1e-3))
else
  tokens = burst
end
keep = math.min(keep, longest)
if keep <= 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'next', string.format('%.17g', next_new),
             'tokens', string.format('%.17g', tokens), 'at', string.format('%.17g', now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(keep / 1000))
end
return {1, delay, 0}
)lua";

std::string microseconds(std::chrono::milliseconds ms) { return std::to_string(ms.count() * 1000); }

// Rounded up, as locally: waiting this long is never early; a refusal says at least 1 ms.
std::chrono::milliseconds ms_up(std::int64_t us) {
    return std::chrono::milliseconds((std::max<std::int64_t>(us, 0) + 999) / 1000);
}

std::optional<RateDecision> read_decision(const RedisReply& reply) {
    if (!reply.is_array() || reply.elements.size() != 3) return std::nullopt;
    for (const auto& e : reply.elements)
        if (!e.is_integer()) return std::nullopt;
    if (reply.elements[0].integer == 1) return RateDecision{true, ms_up(reply.elements[1].integer), {}};
    return RateDecision{false, {}, std::max(std::chrono::milliseconds(1), ms_up(reply.elements[2].integer))};
}

}  // namespace

RedisRateLimits::RedisRateLimits(std::shared_ptr<RedisClient> client, std::string key_prefix, bool fail_open,
                                 std::chrono::milliseconds reconnect_interval)
    : client_(std::move(client)),
      prefix_(std::move(key_prefix) + "rate:"),
      fail_open_(fail_open),
      reconnect_interval_(reconnect_interval),
      script_(rate_limit_script) {}

StoreState RedisRateLimits::state() const {
    if (client_->ready()) return StoreState::available;
    return fail_open_ ? StoreState::degraded : StoreState::unavailable;
}

Task<RateDecision> RedisRateLimits::acquire(const std::string& key, const RateLimitRule& rule) {
    return decide(key, rule);
}

RateDecision RedisRateLimits::while_away() const {
    if (fail_open_) return RateDecision{true, {}, {}};
    return RateDecision{false, {}, reconnect_interval_};
}

Task<RateDecision> RedisRateLimits::decide(std::string key, RateLimitRule rule) {
    check_rule(rule);
    const auto min_spacing = clamp_duration(rule.min_spacing);
    const auto max_wait = clamp_duration(rule.max_wait);
    if (min_spacing.count() == 0 && rule.rate <= 0) co_return RateDecision{};  // the rule limits nothing
    if (!client_->ready()) co_return while_away();

    std::optional<RedisReply> reply;
    try {
        reply = co_await script_.run(*client_, {prefix_ + key},
                                     {microseconds(min_spacing), fmt::format("{:.17g}", rule.rate),
                                      fmt::format("{:.17g}", effective_burst(rule)), microseconds(max_wait)});
    } catch (const RedisUnavailable&) {}
    if (!reply) co_return while_away();
    auto decision = read_decision(*reply);
    if (!decision) {
        spdlog::warn("Redis rate limit script answered \"{}\"; applying the fail-{} policy",
                     reply->is_error() ? reply->text : "an unexpected shape", fail_open_ ? "open" : "closed");
        co_return while_away();
    }
    co_return *decision;
}

}  // namespace toolport::stores
