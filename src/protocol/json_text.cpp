#include "protocol/json_text.hpp"

#include "protocol/json_reader.hpp"
#include "protocol/json_writer.hpp"

namespace toolport::protocol {

Json parse_json_keeping_ids(std::string_view text, std::size_t max_depth) {
    JsonReadOptions options;
    options.keep_big_integer_ids = true;
    options.max_depth = max_depth;
    return read_json(text, options);
}

std::string serialize(const Json& value) {
    std::string out;
    out.reserve(512);  // a typical reply fits; one allocation
    write_json(value, out);
    return out;
}

}  // namespace toolport::protocol
