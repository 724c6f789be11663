// The audit records as they are made, for subscribers in this process (the operator
// console's live Calls view), beside or instead of the audit log's file: the console shows
// calls live even with audit.enabled: false. A record is encoded (one JSON line, as the file
// has it) only while someone subscribes; with nobody subscribed, publishing costs the
// caller one check. Subscribers must not block: each keeps its own bounded backlog.
//
// A live view is read by people: at most kLivePerSecond records a second go out (the first
// of each second); past that, active() says no, so the audit stage does not even make a
// record for the feed, and a server under load serves it at the cost of a page closed. The
// audit log (and GET calls) keeps every record.
//
// On the engine's loop only (where the pipeline's audit stage and the console run).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "stores/audit_record.hpp"

namespace toolport::stores {

class AuditFeed {
public:
    using Subscriber = std::function<void(const std::string& record_json)>;
    static constexpr std::uint32_t kLivePerSecond = 200;
    // Someone subscribes, and a record published now would go out.
    bool active() const {
        return !subscribers_.empty() &&
               (sent_ < kLivePerSecond || std::chrono::steady_clock::now() - window_ >= std::chrono::seconds(1));
    }
    std::uint64_t subscribe(Subscriber subscriber);
    void unsubscribe(std::uint64_t id);
    // Hands the record, as one JSON line without its newline, to every subscriber.
    void publish(const AuditRecord& record);

private:
    std::map<std::uint64_t, Subscriber> subscribers_;
    std::uint64_t next_ = 0;
    std::chrono::steady_clock::time_point window_{};  // the second being counted
    std::uint32_t sent_ = 0;                          // records sent in it
};

}  // namespace toolport::stores
