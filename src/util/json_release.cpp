#include "util/json_release.hpp"

namespace toolport::util {

namespace {

void release(Json& value, int depth) {
    if (value.is_object()) {
        auto& members = value.get_ref<Json::object_t&>();
        if (depth < kReleaseDepth) {
            for (auto& member : members)
                if (member.second.is_structured()) release(member.second, depth + 1);
        }
        members.clear();
    } else if (value.is_array()) {
        auto& items = value.get_ref<Json::array_t&>();
        if (depth < kReleaseDepth) {
            for (auto& item : items)
                if (item.is_structured()) release(item, depth + 1);
        }
        items.clear();
    }
}

}  // namespace

void release_json(Json& value) { release(value, 0); }

}  // namespace toolport::util
