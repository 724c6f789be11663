#include "http_client/body_decoder.hpp"

#include <algorithm>
#include <cctype>

#include <zlib.h>

#include "util/ascii.hpp"

namespace toolport::http_client {

struct BodyDecoder::Zlib {
    z_stream stream{};
    bool raw_deflate_tried = false;
    bool ended = false;  // the compressed stream's end was seen
    bool deflate = false;
    // "deflate" may be zlib-wrapped (as it should) or raw (as some servers send it); the
    // first two bytes tell. They are kept until then, so the answer does not depend on
    // how the network cut the body.
    bool wrapper_known = false;
    std::string head;

    explicit Zlib(bool is_deflate) : deflate(is_deflate) { init(is_deflate ? 15 : 15 + 16); }
    ~Zlib() { inflateEnd(&stream); }
    void init(int window_bits) {
        if (inflateInit2(&stream, window_bits) != Z_OK) throw DecodeError("cannot start the zlib decoder");
    }
};

namespace {

std::string lower_trimmed(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c != ' ' && c != '\t') out += util::to_lower_ascii(c);
    }
    return out;
}

}  // namespace

BodyDecoder::BodyDecoder(std::string_view encoding, std::size_t max_decoded_bytes) : limit_(max_decoded_bytes) {
    const std::string e = lower_trimmed(encoding);
    if (e.empty() || e == "identity") return;
    if (e == "gzip" || e == "x-gzip") zlib_ = std::make_unique<Zlib>(false);
    else if (e == "deflate") zlib_ = std::make_unique<Zlib>(true);
    else throw DecodeError("unsupported Content-Encoding \"" + e.substr(0, 40) + "\"");
}

BodyDecoder::~BodyDecoder() = default;

bool BodyDecoder::feed(std::string_view piece, std::string& out) {
    if (!zlib_) {
        if (decoded_ + piece.size() > limit_) {
            decoded_ += piece.size();
            return false;
        }
        decoded_ += piece.size();
        out.append(piece);
        return true;
    }
    auto& z = *zlib_;
    if (z.ended) return true;  // bytes after the stream's end are ignored
    std::string held;
    bool may_fall_back = false;
    if (z.deflate && !z.wrapper_known) {
        z.head.append(piece);
        if (z.head.size() < 2) return true;
        held = std::move(z.head);
        piece = held;
        z.wrapper_known = true;
        may_fall_back = true;
    }
    z.stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
    z.stream.avail_in = static_cast<uInt>(piece.size());
    char chunk[16384];
    while (z.stream.avail_in > 0 || z.stream.avail_out == 0) {
        z.stream.next_out = reinterpret_cast<Bytef*>(chunk);
        z.stream.avail_out = sizeof chunk;
        int rc = inflate(&z.stream, Z_NO_FLUSH);
        if (rc == Z_DATA_ERROR && may_fall_back && !z.raw_deflate_tried && z.stream.total_out == 0) {
            // "deflate" is meant to be zlib-wrapped, but some servers send raw deflate.
            z.raw_deflate_tried = true;
            inflateEnd(&z.stream);
            z.stream = z_stream{};
            z.init(-15);
            z.stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
            z.stream.avail_in = static_cast<uInt>(piece.size());
            continue;
        }
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            throw DecodeError(std::string("the compressed body is corrupt (") +
                              (z.stream.msg ? z.stream.msg : "zlib error") + ")");
        }
        const std::size_t produced = sizeof chunk - z.stream.avail_out;
        decoded_ += produced;
        if (decoded_ > limit_) return false;
        out.append(chunk, produced);
        if (rc == Z_STREAM_END) {
            z.ended = true;
            return true;
        }
        if (rc == Z_BUF_ERROR || (produced == 0 && z.stream.avail_in == 0)) break;
    }
    return true;
}

void BodyDecoder::finish() const {
    if (!zlib_ || zlib_->ended) return;
    if (zlib_->stream.total_in > 0 || !zlib_->head.empty()) throw DecodeError("the compressed body was cut short");
}

}  // namespace toolport::http_client
