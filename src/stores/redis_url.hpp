// Where the Redis stores connect: parsed from `store: redis://[[user]:password@]host[:port][/db]`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace toolport::stores {

struct RedisEndpoint {
    std::string host;  // a name or an IP address (IPv6 without its brackets)
    std::uint16_t port = 6379;
    std::string username;  // empty: Redis's default user
    std::string password;  // empty: no AUTH
    int db = 0;            // SELECTed after connecting when not 0

    // "host:port/db", for logs and errors: never the credentials.
    std::string describe() const;
};

// Throws StoreConfigError naming the problem; the message never repeats the credentials.
// Percent-encoded credentials are decoded (a password may hold '@' or '/' as %40, %2F).
// Refused: other schemes (rediss:// too: TLS is not supported), query strings, fragments,
// an empty host, a port outside 1..65535, a database that is not a small number.
RedisEndpoint parse_redis_url(std::string_view url);

}  // namespace toolport::stores
