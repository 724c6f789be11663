#include "stores/task_cursor.hpp"

#include <charconv>
#include <stdexcept>

namespace toolport::stores {

std::string TaskCursor::encode() const { return std::to_string(created_at_ms) + ":" + id; }

TaskCursor TaskCursor::parse(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
        throw std::invalid_argument("invalid task cursor");
    TaskCursor cursor;
    auto [end, ec] = std::from_chars(text.data(), text.data() + colon, cursor.created_at_ms);
    if (ec != std::errc() || end != text.data() + colon) throw std::invalid_argument("invalid task cursor");
    cursor.id = std::string(text.substr(colon + 1));
    return cursor;
}

}  // namespace toolport::stores
