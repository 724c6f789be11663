#include "pipeline/result_size.hpp"

#include <memory>

namespace toolport::pipeline {

namespace {

// Counts the bytes nlohmann's serializer would write.
class CountingOutput final : public nlohmann::detail::output_adapter_protocol<char> {
public:
    void write_character(char) override { ++count; }
    void write_characters(const char*, std::size_t length) override { count += length; }
    std::size_t count = 0;
};

// The serializer wants a shared_ptr to its output; this one owns nothing (the aliasing
// constructor with an empty owner), so measuring allocates nothing for the counter.
class SizeMeter {
public:
    SizeMeter() : serializer_(std::shared_ptr<CountingOutput>(std::shared_ptr<void>(), &counter_), ' ',
                              Json::error_handler_t::replace) {}
    std::size_t measure(const Json& value) {
        counter_.count = 0;
        serializer_.dump(value, false, false, 0);
        return counter_.count;
    }

private:
    CountingOutput counter_;
    nlohmann::detail::serializer<Json> serializer_;
};

}  // namespace

std::size_t serialized_size(const Json& value) { return SizeMeter().measure(value); }

std::size_t result_size(const ToolResult& r) {
    constexpr std::size_t kKeyContent = 10;     // "content":
    constexpr std::size_t kIsErrorTrue = 14;    // "isError":true
    constexpr std::size_t kKeyStructured = 20;  // "structuredContent":
    constexpr std::size_t kKeyMeta = 8;         // "_meta":
    SizeMeter meter;  // one for the three parts
    std::size_t size = 2 + kKeyContent + meter.measure(r.content);
    if (!r.structured_content.is_null()) size += 1 + kKeyStructured + meter.measure(r.structured_content);
    if (r.is_error) size += 1 + kIsErrorTrue;
    if (!r.meta.is_null()) size += 1 + kKeyMeta + meter.measure(r.meta);
    return size;
}

}  // namespace toolport::pipeline
