#include "server/task_store.hpp"

#include <array>
#include <utility>

namespace toolport {

namespace {

// The MCP spelling of each status (tasks/get's `status`), in enum order.
constexpr std::array<std::pair<TaskStatus, std::string_view>, 5> status_names{{
    {TaskStatus::working, "working"},
    {TaskStatus::input_required, "input_required"},
    {TaskStatus::completed, "completed"},
    {TaskStatus::failed, "failed"},
    {TaskStatus::cancelled, "cancelled"},
}};

[[noreturn]] void bad_record(const std::string& why) { throw std::invalid_argument("not a task record: " + why); }

const nlohmann::json& member(const nlohmann::json& j, const char* name) {
    auto found = j.find(name);
    if (found == j.end()) bad_record(std::string("no \"") + name + "\"");
    return *found;
}

std::string string_member(const nlohmann::json& j, const char* name) {
    const auto& value = member(j, name);
    if (!value.is_string()) bad_record(std::string("\"") + name + "\" is not a string");
    return value.get<std::string>();
}

std::int64_t integer_member(const nlohmann::json& j, const char* name) {
    const auto& value = member(j, name);
    if (!value.is_number_integer()) bad_record(std::string("\"") + name + "\" is not an integer");
    return value.get<std::int64_t>();
}

// The JSON members (params, result, ...) are null when absent: a record written before a
// member existed still reads.
nlohmann::json json_member(const nlohmann::json& j, const char* name) {
    auto found = j.find(name);
    return found == j.end() ? nlohmann::json() : *found;
}

}  // namespace

std::string_view to_string(TaskStatus status) {
    for (const auto& [value, name] : status_names)
        if (value == status) return name;
    return "unknown";
}

std::optional<TaskStatus> task_status_from(std::string_view text) {
    for (const auto& [value, name] : status_names)
        if (name == text) return value;
    return std::nullopt;
}

nlohmann::json TaskRecord::to_json() const {
    return nlohmann::json{
        {"id", id},
        {"owner", owner},
        {"status", to_string(status)},
        {"status_message", status_message},
        {"created_at_ms", created_at_ms},
        {"last_updated_at_ms", last_updated_at_ms},
        {"ttl_ms", ttl_ms},
        {"poll_interval_ms", poll_interval_ms},
        {"method", method},
        {"params", params},
        {"result", result},
        {"error", error},
        {"input_requests", input_requests},
        {"model", model},
        {"runner", runner},
    };
}

TaskRecord TaskRecord::from_json(const nlohmann::json& j) {
    if (!j.is_object()) bad_record("not an object");
    TaskRecord record;
    record.id = string_member(j, "id");
    record.owner = string_member(j, "owner");
    auto status = task_status_from(string_member(j, "status"));
    if (!status) bad_record("unknown status");
    record.status = *status;
    record.status_message = string_member(j, "status_message");
    record.created_at_ms = integer_member(j, "created_at_ms");
    record.last_updated_at_ms = integer_member(j, "last_updated_at_ms");
    record.ttl_ms = integer_member(j, "ttl_ms");
    record.poll_interval_ms = integer_member(j, "poll_interval_ms");
    record.method = string_member(j, "method");
    record.params = json_member(j, "params");
    record.result = json_member(j, "result");
    record.error = json_member(j, "error");
    record.input_requests = json_member(j, "input_requests");
    if (j.contains("model")) record.model = string_member(j, "model");
    if (j.contains("runner")) record.runner = string_member(j, "runner");
    return record;
}

}  // namespace toolport
