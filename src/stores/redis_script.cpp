#include "stores/redis_script.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#include "stores/redis_client.hpp"

namespace toolport::stores {

namespace {
std::string sha1_hex(const std::string& text) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha1(), nullptr) != 1)
        throw std::runtime_error("SHA1 of a Redis script failed");
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < length; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 0xf];
    }
    return out;
}

std::vector<std::string> eval_command(std::string verb, const std::string& script, const std::vector<std::string>& keys,
                                      const std::vector<std::string>& args) {
    std::vector<std::string> command{std::move(verb), script, std::to_string(keys.size())};
    command.insert(command.end(), keys.begin(), keys.end());
    command.insert(command.end(), args.begin(), args.end());
    return command;
}
}  // namespace

RedisScript::RedisScript(std::string source) : source_(std::move(source)), sha1_(sha1_hex(source_)) {}

Task<RedisReply> RedisScript::run(RedisClient& client, std::vector<std::string> keys,
                                  std::vector<std::string> args) const {
    RedisReply reply = co_await client.command(eval_command("EVALSHA", sha1_, keys, args));
    if (reply.is_error_code("NOSCRIPT")) reply = co_await client.command(eval_command("EVAL", source_, keys, args));
    co_return reply;
}

}  // namespace toolport::stores
