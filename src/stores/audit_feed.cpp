#include "stores/audit_feed.hpp"

#include <vector>

namespace toolport::stores {

std::uint64_t AuditFeed::subscribe(Subscriber subscriber) {
    subscribers_.emplace(++next_, std::move(subscriber));
    return next_;
}

void AuditFeed::unsubscribe(std::uint64_t id) { subscribers_.erase(id); }

void AuditFeed::publish(const AuditRecord& record) {
    if (subscribers_.empty()) return;
    const auto at = std::chrono::steady_clock::now();
    if (at - window_ >= std::chrono::seconds(1)) {
        window_ = at;
        sent_ = 0;
    }
    if (sent_ >= kLivePerSecond) return;
    ++sent_;
    const std::string line = encode_record(record);
    // A subscriber may unsubscribe (itself or another) while it is told: told from a copy.
    std::vector<Subscriber> now;
    now.reserve(subscribers_.size());
    for (const auto& [id, subscriber] : subscribers_) now.push_back(subscriber);
    for (const auto& subscriber : now) subscriber(line);
}

}  // namespace toolport::stores
