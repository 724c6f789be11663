// PinGuard: the runtime's one check of every listing a source installs against the pins
// (pin_definition.hpp), with the policy of that source:
//   off          no pins;
//   warn         everything is served; a change is logged once, counted
//                (toolport_pin_changes_total), audited and kept as pending for review;
//   quarantine   the same, and each changed, renamed or new definition is withheld: not
//                listed, and a call gets MCP_TOOL_QUARANTINED naming the change and the
//                command that approves it;
//   block-source the same, but one change withholds everything of the source (tools,
//                prompts and templates alike) until approved.
// Sources call screen() where they install a listing (providers/tool_set.cpp for tools; the
// gateway for its prompts, resource templates and tool search mode's tools), and give
// watch() a function that installs their last listing again: after an approval (here, by
// the HTTP API or `toolport pins approve`, or by another replica through Redis) the
// guard calls it, and what was withheld is served.
//
// The pins are kept in memory, read from the store (stores/pin_store.hpp) at start and
// again whenever the store's version changes (polled every `poll`), and written through
// to it: a first sight as a pin, a change as pending. A first sight another replica pinned
// first (the store keeps the first pin) reads the store again, and the source's listing is
// judged against that pin. On the engine's loop only.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "async/task.hpp"
#include "stores/audit_record.hpp"
#include "stores/pin_store.hpp"

namespace toolport {
class Executor;
}

namespace toolport::pins {

enum class PinPolicy { off, warn, quarantine, block_source };
std::optional<PinPolicy> parse_pin_policy(std::string_view text);
std::string_view policy_name(PinPolicy policy);

struct PinSettings {
    // For the sources Toolport does not own (gateway upstreams, REST catalogs, OpenAPI
    // documents) unless `sources.<name>.pinning` says otherwise.
    PinPolicy default_policy = PinPolicy::warn;
    std::map<std::string, PinPolicy> sources;
    // How often the store is asked whether the pins changed (approvals elsewhere).
    std::chrono::milliseconds poll{2000};
};

struct Withheld {
    std::string name;
    std::string message;     // what changed
    std::string suggestion;  // the commands that review and approve it
};

struct Screening {
    std::vector<Withheld> withheld;
    std::size_t findings = 0;  // definitions that differ from their pins (or are new)
};

class PinGuard {
public:
    PinGuard(std::shared_ptr<stores::PinStore> store, PinSettings settings, Executor& executor);
    ~PinGuard();
    PinGuard(const PinGuard&) = delete;
    PinGuard& operator=(const PinGuard&) = delete;

    // Reads the pins (before the sources list anything) and starts polling the store.
    // With a store that answers on the loop (Redis) the first read completes later; until
    // then a source under quarantine or block-source has its tools withheld.
    void start();
    // No poll starts after this; one under way ends by itself (see busy()).
    void stop();
    // Whether a read or write of the store it started is still under way: shutdown lets
    // them end while the loop runs (one left suspended when the loop stops keeps its
    // coroutine frames for ever).
    bool busy() const { return *in_flight_ > 0; }

    // Where approvals are recorded (the audit log), and who wrote them.
    void set_audit(std::function<void(stores::AuditRecord)> audit) { audit_ = std::move(audit); }

    PinPolicy policy(const std::string& source) const;
    const stores::PinStore& store() const { return *store_; }

    // One source's listing of one `kind` (tool, prompt, template: every entry of it) against
    // its pins of that kind: first sights are pinned, changes recorded as pending; returns
    // what the policy withholds. `listed`: the listing is the source's answer (not an
    // upstream that has not listed yet), so an empty one is remembered as seen (the
    // "seen:<kind>" marker): what the source lists later is judged as added, not trusted
    // as a first sight. Under block-source, a pending change of any kind withholds every
    // kind: a new one makes the source's watchers install again.
    Screening screen(const std::string& source, std::string_view kind, const std::vector<stores::PinRecord>& current,
                     bool listed = true);

    // `install_again` runs after the source's pins changed (approved, reset, reloaded).
    int watch(const std::string& source, std::function<void()> install_again);
    void unwatch(int id);

    // Approves the pending definitions of `source` (all of them, or those named `name`, of
    // any kind), as `by`; returns what was approved. Audited.
    Task<std::vector<stores::PinRecord>> approve(std::string source, std::string name, std::string by);
    // Forgets the pins of `source` (or of `name` in it): the next listing pins afresh.
    Task<std::size_t> reset(std::string source, std::string name, std::string by);
    // Reads the store again now.
    Task<void> reload();

    // What the guard knows, for the API and the console: every source with its policy,
    // pins and pending definitions (with the one line of what changed).
    Json describe() const;
    const stores::PinSnapshot& snapshot() const { return snapshot_; }
    bool loaded() const { return loaded_; }
    // Why the store could not be read at the last poll ("" when it could): the guard then
    // judges listings against the pins it read last (or, never having read them, withholds
    // what quarantine and block-source would).
    const std::string& store_error() const { return store_error_; }
    // Expires when the guard is destroyed: for watchers that may outlive it (a source's
    // state kept alive by work still queued on the loop).
    std::weak_ptr<bool> alive() const { return alive_; }

private:
    void poll_later(std::chrono::milliseconds after);
    Task<void> poll();
    void install(stores::PinSnapshot snapshot, const std::set<std::string>& sources);
    // Runs `source`'s watchers later, on the loop.
    void notify(const std::string& source);
    // A listing's changes, written together; reads the store again when another replica
    // had pinned a first sight already.
    Task<void> record(std::string source, stores::ListingWrites writes);
    void write(Task<void> task, std::string what);
    void audit(const std::string& source, const std::string& target, const std::string& outcome, const std::string& by,
               const std::string& detail);

    std::shared_ptr<stores::PinStore> store_;
    PinSettings settings_;
    Executor& executor_;
    stores::PinSnapshot snapshot_;
    std::string version_;
    std::string store_error_;
    bool loaded_ = false;
    bool stopped_ = false;
    std::function<void()> cancel_poll_;
    std::function<void(stores::AuditRecord)> audit_;
    std::map<int, std::pair<std::string, std::function<void()>>> watchers_;
    int next_watcher_ = 0;
    // (source, key, digest) already warned of: a change is told once, not at every listing.
    std::set<std::string> told_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    // Its polls and writes under way (shared: one may end after the guard).
    std::shared_ptr<std::size_t> in_flight_ = std::make_shared<std::size_t>(0);
    // Runs `task` detached, counted in in_flight_ until it ends; `done` gets its outcome.
    void run_counted(Task<void> task, std::function<void(std::exception_ptr)> done = {});
};

}  // namespace toolport::pins
