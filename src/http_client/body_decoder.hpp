// BodyDecoder: undoes a response's Content-Encoding (gzip, deflate or none) piece by piece,
// counting what it produces, so a small compressed body that would inflate past the size
// cap (a "zip bomb") is stopped at the cap, not after it was inflated. Asio-free.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace toolport::http_client {

struct DecodeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class BodyDecoder {
public:
    // `encoding`: the Content-Encoding header ("", "identity", "gzip", "x-gzip",
    // "deflate"). Throws DecodeError for another one.
    BodyDecoder(std::string_view encoding, std::size_t max_decoded_bytes);
    ~BodyDecoder();
    BodyDecoder(const BodyDecoder&) = delete;
    BodyDecoder& operator=(const BodyDecoder&) = delete;

    // Appends the decoded form of `piece` to `out`. Returns false, having stopped, when the
    // decoded body would pass the limit. Throws DecodeError for corrupt data.
    bool feed(std::string_view piece, std::string& out);
    // After the last piece: throws DecodeError when the compressed stream was cut short.
    void finish() const;

    std::size_t decoded_bytes() const { return decoded_; }
    // No Content-Encoding to undo: the decoded body is the bytes received.
    bool identity() const { return !zlib_; }
    // Moves the limit (a caller that learns its cap after the header: ResponseStream::read_all).
    void set_limit(std::size_t max_decoded_bytes) { limit_ = max_decoded_bytes; }

private:
    struct Zlib;
    std::unique_ptr<Zlib> zlib_;  // null: identity
    std::size_t limit_;
    std::size_t decoded_ = 0;
};

}  // namespace toolport::http_client
