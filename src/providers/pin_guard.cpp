#include "providers/pin_guard.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "observability/metrics.hpp"
#include "providers/pin_definition.hpp"
#include "stores/local_pin_store.hpp"
#include "util/sanitize.hpp"

namespace toolport::pins {

namespace {

std::string now_text() { return stores::iso_time(std::chrono::system_clock::now()); }

// What the source's pins are, as far as serving goes: keys and digests of its pins.
std::string pins_signature(const stores::PinSnapshot& snapshot, const std::string& source) {
    std::string out;
    auto it = snapshot.find(source);
    if (it == snapshot.end()) return out;
    for (const auto& [key, pin] : it->second.pinned) {
        out += key;
        out += '\0';
        out += pin.digest;
        out += '\n';
    }
    return out;
}

std::string shown(const std::string& text) { return util::sanitize_for_message(text, 128); }

// A name on a command line: plain names as they are, others quoted for a POSIX shell.
std::string shell_word(const std::string& text) {
    const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':';
    });
    if (plain) return text;
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

}  // namespace

std::optional<PinPolicy> parse_pin_policy(std::string_view text) {
    if (text == "off") return PinPolicy::off;
    if (text == "warn") return PinPolicy::warn;
    if (text == "quarantine") return PinPolicy::quarantine;
    if (text == "block-source") return PinPolicy::block_source;
    return std::nullopt;
}

std::string_view policy_name(PinPolicy policy) {
    switch (policy) {
        case PinPolicy::off: return "off";
        case PinPolicy::warn: return "warn";
        case PinPolicy::quarantine: return "quarantine";
        case PinPolicy::block_source: return "block-source";
    }
    return "off";
}

PinGuard::PinGuard(std::shared_ptr<stores::PinStore> store, PinSettings settings, Executor& executor)
    : store_(std::move(store)), settings_(std::move(settings)), executor_(executor) {}

PinGuard::~PinGuard() {
    *alive_ = false;
    stop();
}

void PinGuard::start() {
    if (auto* local = dynamic_cast<stores::LocalPinStore*>(store_.get())) {
        // Read before any source lists: the first listing is judged against the file.
        version_ = local->version_now();
        snapshot_ = local->load_now();
        loaded_ = true;
        poll_later(settings_.poll);
        return;
    }
    run_counted(poll());
}

void PinGuard::stop() {
    stopped_ = true;
    if (cancel_poll_) {
        cancel_poll_();
        cancel_poll_ = nullptr;
    }
}

PinPolicy PinGuard::policy(const std::string& source) const {
    auto it = settings_.sources.find(source);
    return it != settings_.sources.end() ? it->second : settings_.default_policy;
}

void PinGuard::poll_later(std::chrono::milliseconds after) {
    if (stopped_) return;
    std::weak_ptr<bool> alive = alive_;
    cancel_poll_ = executor_.schedule_after(after, [this, alive] {
        if (!alive.lock()) return;
        cancel_poll_ = nullptr;
        run_counted(poll());
    });
}

Task<void> PinGuard::poll() {
    auto alive = alive_;
    try {
        std::string version = co_await store_->version();
        if (!*alive) co_return;
        if (version != version_ || !loaded_) {
            stores::PinSnapshot snapshot = co_await store_->load();
            if (!*alive) co_return;
            version_ = std::move(version);
            install(std::move(snapshot), {});
        }
        if (!store_error_.empty()) spdlog::info("pins: the {} store answers again", store_->backend());
        store_error_.clear();
    } catch (const std::exception& e) {
        if (!*alive) co_return;
        store_error_ = e.what();
        // Read it whole once it answers again: what was written meanwhile (here or elsewhere)
        // may not have moved the version past the one last read.
        version_.clear();
        if (told_.insert(std::string("store\0", 6) + e.what()).second) {
            spdlog::warn("pins: cannot read the {} store: {}{}", store_->backend(), e.what(),
                         loaded_ ? "; listings are judged against the pins read last" : "");
        }
    }
    // Until the pins are first read, sooner: quarantined sources wait for them.
    if (*alive) poll_later(loaded_ ? settings_.poll : std::min(settings_.poll, std::chrono::milliseconds(250)));
}

Task<void> PinGuard::reload() {
    auto alive = alive_;
    std::string version = co_await store_->version();
    stores::PinSnapshot snapshot = co_await store_->load();
    if (!*alive) co_return;
    version_ = std::move(version);
    install(std::move(snapshot), {});
}

void PinGuard::install(stores::PinSnapshot snapshot, const std::set<std::string>& sources) {
    std::set<std::string> changed = sources;
    for (const auto& [id, watcher] : watchers_) {
        if (!loaded_ || pins_signature(snapshot_, watcher.first) != pins_signature(snapshot, watcher.first)) {
            changed.insert(watcher.first);
        }
    }
    snapshot_ = std::move(snapshot);
    loaded_ = true;
    for (const auto& [id, watcher] : watchers_) {
        if (!changed.count(watcher.first)) continue;
        // Later, on the loop: never inside a listing being installed.
        std::weak_ptr<bool> alive = alive_;
        executor_.post([this, alive, id = id] {
            if (!alive.lock()) return;
            if (auto it = watchers_.find(id); it != watchers_.end()) it->second.second();
        });
    }
}

void PinGuard::notify(const std::string& source) {
    for (const auto& [id, watcher] : watchers_) {
        if (watcher.first != source) continue;
        std::weak_ptr<bool> alive = alive_;
        executor_.post([this, alive, id = id] {
            if (!alive.lock()) return;
            if (auto it = watchers_.find(id); it != watchers_.end()) it->second.second();
        });
    }
}

Task<void> PinGuard::record(std::string source, stores::ListingWrites writes) {
    auto alive = alive_;
    // This guard's copy already holds the write (screen() made it there first).
    const std::string expected = version_;
    auto recorded = co_await store_->record_listing_from(std::move(source), std::move(writes), expected);
    if (!*alive) co_return;
    if (!recorded.version_after.empty()) {
        // Nobody else wrote since `expected` (the store checked, under its lock): the copy is
        // what the store holds, and the next poll finds this version and reads nothing (it
        // read the whole store again for this write). A later write issued before this one
        // ended continues from here (LocalPinStore::WriteChain).
        version_ = std::move(recorded.version_after);
        co_return;
    }
    // Another replica pinned a key first: its pin stands, so this guard reads the store
    // again now (not at the next poll) and its next listing is judged against that pin.
    if (recorded.lost > 0) co_await reload();
}

void PinGuard::run_counted(Task<void> task, std::function<void(std::exception_ptr)> done) {
    ++*in_flight_;
    spawn(std::move(task), [in_flight = in_flight_, done = std::move(done)](std::exception_ptr error) {
        --*in_flight;
        if (done) done(std::move(error));
    });
}

void PinGuard::write(Task<void> task, std::string what) {
    std::weak_ptr<bool> alive = alive_;
    run_counted(std::move(task), [this, alive, what = std::move(what)](std::exception_ptr error) {
        if (!error || !alive.lock()) return;
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            spdlog::warn("pins: could not write {} to the {} store: {}", what, store_->backend(), e.what());
        } catch (...) {}
    });
}

void PinGuard::audit(const std::string& source, const std::string& target, const std::string& outcome,
                     const std::string& by, const std::string& detail) {
    if (!audit_) return;
    stores::AuditRecord r;
    r.time = std::chrono::system_clock::now();
    r.method = "pins/" + outcome;
    r.target = target;
    r.source = source;
    r.principal = by;
    r.outcome = outcome;
    r.code = detail.substr(0, 500);
    audit_(std::move(r));
}

Screening PinGuard::screen(const std::string& source, std::string_view kind_view,
                           const std::vector<stores::PinRecord>& current, bool listed) {
    Screening out;
    const PinPolicy pol = policy(source);
    if (pol == PinPolicy::off) return out;
    const std::string kind(kind_view);
    auto gauge = [&] {
        observability::metrics()
            .gauge("toolport_pins_withheld", {{"source", source}, {"kind", kind}})
            .set(static_cast<double>(out.withheld.size()));
    };
    if (!loaded_) {
        if (pol == PinPolicy::warn) return out;
        for (const auto& record : current) {
            out.withheld.push_back({record.name,
                                    fmt::format("{} {} of source {} is withheld until its pins are read from the {} "
                                                "store (pinning: {})",
                                                kind, shown(record.name), source, store_->backend(), policy_name(pol)),
                                    "Retry in a few seconds; if it persists, check the store's health (GET /health)."});
        }
        return out;
    }
    auto& pins = snapshot_[source];
    stores::PinMap same_kind;
    for (const auto& [key, pin] : pins.pinned) {
        if (pin.kind == kind) same_kind.emplace(key, pin);
    }
    const std::string seen_key = std::string(kSeenKind) + ":" + kind;
    const bool seen = pins.pinned.count(seen_key) > 0;
    const std::string now = now_text();
    stores::ListingWrites writes;  // written together once judged
    if (current.empty() && listed && same_kind.empty() && !seen) {
        // Seen with none of the kind: remembered, so that what it lists later is "added"
        // under its policy instead of trusted as a first sight.
        stores::PinRecord marker = make_pin(kSeenKind, kind, {{"listed", 0}});
        marker.time = now;
        marker.by = "first sight";
        pins.pinned[seen_key] = marker;
        writes.first_sights.push_back(std::move(marker));
    }
    const bool had_pending = !pins.pending.empty();
    std::vector<Withheld> changed;
    for (auto& c : classify(same_kind, current, seen)) {
        const std::string key = c.current.key();
        switch (c.finding) {
            case Finding::pinned:
                if (pins.pending.erase(key)) writes.settled.push_back(key);
                continue;
            case Finding::first_sight: {
                stores::PinRecord record = c.current;
                record.time = now;
                record.by = "first sight";
                pins.pinned[key] = record;
                writes.first_sights.push_back(std::move(record));
                continue;
            }
            case Finding::changed:
            case Finding::renamed:
            case Finding::added: break;
        }
        ++out.findings;
        stores::PinRecord record = c.current;
        record.time = now;
        record.change = fmt::format("{}: {}", finding_name(c.finding), c.detail);
        if (auto it = pins.pending.find(key); it == pins.pending.end() || it->second.digest != record.digest) {
            pins.pending[key] = record;
            writes.pending.push_back(record);
        }
        if (told_.insert(source + '\0' + key + '\0' + record.digest).second) {
            spdlog::warn("pins: {} {} of source {} {}: {} (pinning: {}{})", kind, shown(c.current.name), source,
                         finding_name(c.finding), c.detail, policy_name(pol),
                         pol == PinPolicy::warn ? ", still served" : ", withheld until approved");
            observability::metrics().increment("toolport_pin_changes_total",
                                               {{"source", source},
                                                {"change", std::string(finding_name(c.finding))},
                                                {"kind", kind}});
            // Tools by name, as before; other kinds by key (a prompt may share a tool's name).
            audit(source, kind == kToolKind ? c.current.name : key, "pin_" + std::string(finding_name(c.finding)), "",
                  c.detail);
        }
        // Tools by name; other kinds by key, which no tool of that name shares.
        const std::string name = shell_word(kind == kToolKind ? c.current.name : key);
        changed.push_back(
            {c.current.name,
             fmt::format("{} {} of source {} is quarantined: {} ({}) since an operator approved its definition", kind,
                         shown(c.current.name), source, finding_name(c.finding), c.detail),
             fmt::format("An operator reviews the change with `toolport pins diff {} {}` and approves it with "
                         "`toolport pins approve {} {}`; it is served from then on.",
                         shell_word(source), name, shell_word(source), name)});
    }
    if (!writes.empty()) write(record(source, std::move(writes)), "a listing's pins");
    if (pol == PinPolicy::block_source && had_pending && pins.pending.empty()) {
        notify(source);  // the last change is settled: the other kinds are served again
    }
    if (pol == PinPolicy::quarantine) {
        out.withheld = std::move(changed);
    } else if (pol == PinPolicy::block_source && !pins.pending.empty()) {
        // Any change of the source blocks all of it, whatever kind changed: its other
        // kinds are installed again to be withheld too.
        if (!had_pending) notify(source);
        std::string first;
        if (!changed.empty()) {
            first = changed.front().message;
        } else {
            const auto& [key, record] = *pins.pending.begin();
            first = fmt::format("{} {} of source {}: {}", record.kind, shown(record.name), source, shown(record.change));
        }
        for (const auto& record : current) {
            out.withheld.push_back(
                {record.name,
                 fmt::format("source {} is blocked (pinning: block-source): {} of its definitions changed since "
                             "approved; first: {}",
                             source, pins.pending.size(), first),
                 fmt::format("An operator reviews the changes with `toolport pins diff {}` and approves them with "
                             "`toolport pins approve {}`.",
                             shell_word(source), shell_word(source))});
        }
    }
    gauge();
    return out;
}

int PinGuard::watch(const std::string& source, std::function<void()> install_again) {
    const int id = ++next_watcher_;
    watchers_[id] = {source, std::move(install_again)};
    return id;
}

void PinGuard::unwatch(int id) { watchers_.erase(id); }

Task<std::vector<stores::PinRecord>> PinGuard::approve(std::string source, std::string name, std::string by) {
    auto alive = alive_;
    std::vector<stores::PinRecord> chosen;
    if (auto it = snapshot_.find(source); it != snapshot_.end()) {
        for (const auto& [key, record] : it->second.pending) {
            if (name.empty() || record.name == name || key == name) chosen.push_back(record);
        }
    }
    const std::string now = now_text();
    for (auto& record : chosen) {
        const std::string change = record.change;
        record.by = by;
        record.time = now;
        record.change.clear();
        co_await store_->approve(source, record);
        if (!*alive) co_return chosen;
        auto& pins = snapshot_[source];
        pins.pinned[record.key()] = record;
        pins.pending.erase(record.key());
        spdlog::info("pins: {} {} of source {} approved by {} ({})", record.kind, shown(record.name), source, shown(by),
                     change);
        audit(source, record.kind == kToolKind ? record.name : record.key(), "approved", by, change);
    }
    if (!chosen.empty()) install(snapshot_, {source});
    co_return chosen;
}

Task<std::size_t> PinGuard::reset(std::string source, std::string name, std::string by) {
    auto alive = alive_;
    std::vector<std::string> keys;
    if (auto it = snapshot_.find(source); it != snapshot_.end()) {
        std::set<std::string> all;
        for (const auto& [key, record] : it->second.pinned) {
            // A "seen:<kind>" marker goes with the whole source, or by its key.
            const bool by_name = record.kind != kSeenKind && record.name == name;
            if (name.empty() || by_name || key == name) all.insert(key);
        }
        for (const auto& [key, record] : it->second.pending) {
            if (name.empty() || record.name == name || key == name) all.insert(key);
        }
        keys.assign(all.begin(), all.end());
    }
    std::size_t gone = 0;
    if (name.empty()) {
        gone = co_await store_->reset(source, "");
    } else {
        for (const auto& key : keys) gone += co_await store_->reset(source, key);
    }
    if (!*alive) co_return gone;
    auto snapshot = snapshot_;
    if (name.empty()) {
        snapshot.erase(source);
    } else {
        for (const auto& key : keys) {
            snapshot[source].pinned.erase(key);
            snapshot[source].pending.erase(key);
        }
    }
    spdlog::info("pins: {} pin(s) of source {}{} reset by {}", gone, source,
                 name.empty() ? "" : " (" + shown(name) + ")", shown(by));
    audit(source, name.empty() ? "*" : name, "reset", by, fmt::format("{} entries", gone));
    install(std::move(snapshot), {source});
    co_return gone;
}

Json PinGuard::describe() const {
    Json sources = Json::array();
    std::set<std::string> names;
    for (const auto& [source, pins] : snapshot_) names.insert(source);
    for (const auto& [id, watcher] : watchers_) names.insert(watcher.first);
    for (const auto& source : names) {
        Json pinned = Json::array();
        Json pending = Json::array();
        Json seen_empty = Json::array();
        if (auto it = snapshot_.find(source); it != snapshot_.end()) {
            for (const auto& [key, record] : it->second.pinned) {
                // A marker is no definition: listed apart, as the kinds the source was
                // seen listing none of.
                if (record.kind == kSeenKind) seen_empty.push_back(record.name);
                else pinned.push_back(record.to_json());
            }
            for (const auto& [key, record] : it->second.pending) pending.push_back(record.to_json());
        }
        sources.push_back({{"source", source},
                           {"policy", std::string(policy_name(policy(source)))},
                           {"pinned", std::move(pinned)},
                           {"pending", std::move(pending)},
                           {"seen_empty", std::move(seen_empty)}});
    }
    return {{"store", std::string(store_->backend())}, {"loaded", loaded_}, {"sources", std::move(sources)}};
}

}  // namespace toolport::pins
