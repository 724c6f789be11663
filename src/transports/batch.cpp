#include "transports/batch.hpp"

#include <fmt/format.h>

namespace toolport {

using namespace protocol;

ProtocolError batch_refusal(std::optional<Revision> revision) {
    if (!revision) {
        return {nullptr, error_code::kInvalidRequest,
                "Invalid Request: JSON-RPC batches are not accepted before initialize (and initialize "
                "itself must not be batched)"};
    }
    return {nullptr, error_code::kInvalidRequest,
            fmt::format("Invalid Request: JSON-RPC batches are not supported in protocol {}; "
                        "send one message at a time (only 2025-03-26 allows batches)",
                        name(*revision))};
}

std::optional<Json> BatchCollector::begin(const ParsedPayload& batch) {
    Pending pending;
    for (const auto& item : batch.items) {
        if (const auto* message = std::get_if<Message>(&item)) {
            if (const auto* request = std::get_if<Request>(message))
                pending.waiting.insert(protocol::id_key(request->id));
            continue;
        }
        // A malformed member gets its error inside the batch reply too: from the session
        // when its id is known (and the reply can be matched), from here when it is not.
        const auto& error = std::get<ProtocolError>(item);
        if (error.id.is_null()) pending.replies.push_back(make_error(nullptr, error.code, error.message));
        else pending.waiting.insert(id_key(error.id));
    }
    if (pending.waiting.empty()) {
        if (pending.replies.empty()) return std::nullopt;
        return std::move(pending.replies);
    }
    const std::size_t index = batches_.size();
    for (const auto& key : pending.waiting) owner_[key] = index;
    batches_.push_back(std::move(pending));
    return std::nullopt;
}

std::optional<Json> BatchCollector::offer(const Json& message) {
    if (owner_.empty() || message.contains("method") || !message.contains("id")) return std::nullopt;
    auto key = id_key(message["id"]);
    auto it = owner_.find(key);
    if (it == owner_.end()) return std::nullopt;
    auto& pending = batches_[it->second];
    owner_.erase(it);
    pending.waiting.erase(key);
    pending.replies.push_back(message);
    if (!pending.waiting.empty()) {
        taken_.insert(key);
        return std::nullopt;
    }
    Json done = std::move(pending.replies);
    for (const auto& reply : done) taken_.erase(id_key(reply["id"]));
    if (owner_.empty()) batches_.clear();
    return done;
}

bool BatchCollector::holds(const Json& message) const {
    if (taken_.empty() || message.contains("method") || !message.contains("id")) return false;
    return taken_.count(id_key(message["id"])) > 0;
}

}  // namespace toolport
