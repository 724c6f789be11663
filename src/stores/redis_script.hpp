// RedisScript: a Lua script run atomically in Redis by its SHA1 (EVALSHA), sent in full
// (EVAL, which also caches it) only when Redis answers NOSCRIPT, as after a restart.
#pragma once

#include <string>
#include <vector>

#include "async/task.hpp"
#include "stores/redis_reply.hpp"

namespace toolport::stores {

class RedisClient;

class RedisScript {
public:
    explicit RedisScript(std::string source);

    const std::string& sha1() const { return sha1_; }

    // The script's reply (an error reply included); throws RedisUnavailable like
    // RedisClient::command. `client` and this script must outlive the task.
    Task<RedisReply> run(RedisClient& client, std::vector<std::string> keys, std::vector<std::string> args) const;

private:
    std::string source_;
    std::string sha1_;  // lowercase hex, as Redis names scripts
};

}  // namespace toolport::stores
