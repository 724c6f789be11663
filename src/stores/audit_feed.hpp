// The audit records as they are made, for subscribers in this process (the operator
// console's live Calls view), beside or instead of the audit log's file: the console shows
// calls live even with audit.enabled: false. A record is encoded (one JSON line, as the file
// has it) only while someone subscribes; with nobody subscribed, publishing costs the
// caller one check. Subscribers must not block: each keeps its own bounded backlog.
//
// On the engine's loop only (where the pipeline's audit stage and the console run).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "stores/audit_record.hpp"

namespace toolport::stores {

class AuditFeed {
public:
    using Subscriber = std::function<void(const std::string& record_json)>;
    bool active() const { return !subscribers_.empty(); }
    std::uint64_t subscribe(Subscriber subscriber);
    void unsubscribe(std::uint64_t id);
    // Hands the record, as one JSON line without its newline, to every subscriber.
    void publish(const AuditRecord& record);

private:
    std::map<std::uint64_t, Subscriber> subscribers_;
    std::uint64_t next_ = 0;
};

}  // namespace toolport::stores
