// JSON-RPC batches. Only protocol 2025-03-26 allows them; every other revision refuses a
// batch with one error. For an allowed batch, the replies to its requests are gathered
// and sent back together as one array, as JSON-RPC 2.0 requires.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "util/json.hpp"

namespace toolport {

// The error for a batch the session's revision does not allow (null: not initialized).
protocol::ProtocolError batch_refusal(std::optional<protocol::Revision> revision);

class BatchCollector {
public:
    // Registers the requests of a parsed batch (notifications and responses need no reply).
    // A malformed member whose id could not be read is answered inside the batch reply
    // too (JSON-RPC 2.0 §6: `[1]` is answered `[{"id":null,"error":...}]`): begin() writes
    // that error itself, so the transport must not send it separately. Returns the batch
    // reply when nothing else is to be waited for but it holds such errors.
    std::optional<Json> begin(const protocol::ParsedPayload& batch);
    // Offers an outgoing message. Returns the finished batch reply when `message` was the
    // last reply a batch was waiting for.
    std::optional<Json> offer(const Json& message);
    // True when `message` was taken into a batch still waiting for other replies.
    bool holds(const Json& message) const;

private:
    struct Pending {
        std::unordered_set<std::string> waiting;
        Json replies = Json::array();
    };
    std::vector<Pending> batches_;
    std::unordered_map<std::string, std::size_t> owner_;  // reply id -> batch index
    std::unordered_set<std::string> taken_;
};

}  // namespace toolport
