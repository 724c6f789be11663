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

}  // namespace

std::size_t serialized_size(const Json& value) {
    auto counter = std::make_shared<CountingOutput>();
    nlohmann::detail::serializer<Json> serializer(counter, ' ', Json::error_handler_t::replace);
    serializer.dump(value, false, false, 0);
    return counter->count;
}

std::size_t result_size(const ToolResult& r) {
    constexpr std::size_t kKeyContent = 10;     // "content":
    constexpr std::size_t kIsErrorTrue = 14;    // "isError":true
    constexpr std::size_t kKeyStructured = 20;  // "structuredContent":
    constexpr std::size_t kKeyMeta = 8;         // "_meta":
    std::size_t size = 2 + kKeyContent + serialized_size(r.content);
    if (!r.structured_content.is_null()) size += 1 + kKeyStructured + serialized_size(r.structured_content);
    if (r.is_error) size += 1 + kIsErrorTrue;
    if (!r.meta.is_null()) size += 1 + kKeyMeta + serialized_size(r.meta);
    return size;
}

}  // namespace toolport::pipeline
