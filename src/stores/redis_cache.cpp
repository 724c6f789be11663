#include <spdlog/spdlog.h>

#include "stores/argument_checks.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"

namespace toolport::stores {

RedisCache::RedisCache(std::shared_ptr<RedisClient> client, std::string key_prefix,
                       std::unique_ptr<MemoryCache> fallback)
    : client_(std::move(client)), prefix_(std::move(key_prefix) + "cache:"), fallback_(std::move(fallback)) {}

StoreState RedisCache::state() const { return client_->ready() ? StoreState::available : StoreState::degraded; }

Task<std::optional<std::string>> RedisCache::get(const std::string& key) { return fetch(key); }

Task<void> RedisCache::put(const std::string& key, std::string value, std::chrono::milliseconds ttl) {
    return store(key, std::move(value), ttl);
}

Task<std::string> RedisCache::generation(const std::string& scope) { return read_generation(scope); }

Task<void> RedisCache::invalidate(const std::string& scope) { return bump_generation(scope); }

Task<std::string> RedisCache::read_generation(std::string scope) {
    // While Redis is away the fallback's entries are used, under the fallback's generations.
    if (!client_->ready()) co_return fallback_->generation_of(scope);
    std::optional<RedisReply> reply;
    try {
        reply = co_await client_->command({"GET", prefix_ + "generation:" + scope});
    } catch (const RedisUnavailable&) {}
    if (!reply) co_return fallback_->generation_of(scope);
    if (reply->is_string()) co_return "r" + reply->text;
    co_return std::string("r0");
}

Task<void> RedisCache::bump_generation(std::string scope) {
    // The fallback's too: entries it kept during an outage are as stale as Redis's.
    fallback_->next_generation(scope);
    if (!client_->ready()) {
        spdlog::warn("Redis is away: cached results of {} are invalidated on this replica only", scope);
        co_return;
    }
    std::optional<RedisReply> reply;
    try {
        reply = co_await client_->command({"INCR", prefix_ + "generation:" + scope});
    } catch (const RedisUnavailable&) {}
    if (!reply || reply->is_error()) {
        spdlog::warn("Redis cache INCR failed{}: cached results of {} are invalidated on this replica only",
                     reply ? " (" + reply->text + ")" : std::string(), scope);
    }
}

Task<std::optional<std::string>> RedisCache::fetch(std::string key) {
    if (!client_->ready()) co_return fallback_->lookup(key);
    std::optional<RedisReply> reply;
    try {
        reply = co_await client_->command({"GET", prefix_ + key});
    } catch (const RedisUnavailable&) {}
    if (!reply) co_return fallback_->lookup(key);  // Redis went away mid-command
    if (reply->is_string()) co_return std::move(reply->text);
    if (!reply->is_nil()) spdlog::warn("Redis cache GET answered \"{}\"; counted as a miss", reply->text);
    co_return std::nullopt;
}

Task<void> RedisCache::store(std::string key, std::string value, std::chrono::milliseconds ttl) {
    if (ttl <= std::chrono::milliseconds::zero()) co_return;
    if (!client_->ready()) {
        fallback_->store(key, std::move(value), ttl);
        co_return;
    }
    const auto px = std::to_string(clamp_duration(ttl).count());
    std::optional<RedisReply> reply;
    try {
        reply = co_await client_->command({"SET", prefix_ + key, value, "PX", px});
    } catch (const RedisUnavailable&) {}
    if (!reply) {
        fallback_->store(key, std::move(value), ttl);
        co_return;
    }
    if (reply->is_error()) {
        spdlog::warn("Redis cache SET answered \"{}\"; the value is not cached", reply->text);
        co_return;
    }
    // Redis holds the newer value; an older one kept during an outage must not come back in the next.
    fallback_->erase(key);
}

}  // namespace toolport::stores
