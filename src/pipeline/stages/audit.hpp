// AuditStage (always on, outermost): one audit record per tool call, whatever its outcome
// (a result, a tool error, a protocol error, a call its client cancelled), handed to the
// audit log (stores/audit_log.hpp), which writes it off the call's path, and to the
// in-memory feed (stores/audit_feed.hpp) while anyone follows it. With no log and nobody
// following, a call passes through without a record made. The records of
// resources/read and prompts/get, which do not pass the pipeline, are made here too
// (served(), called from the server's hook) so that every record is made one way.
#pragma once

#include <chrono>
#include <exception>
#include <memory>

#include "pipeline/pipeline.hpp"
#include "stores/audit_feed.hpp"
#include "stores/audit_log.hpp"
#include "util/redaction/detectors.hpp"

namespace toolport::pipeline {

class AuditStage final : public Stage {
public:
    // Either may be null. `replica` names this process in records when there is no log.
    AuditStage(std::shared_ptr<stores::AuditLog> log, std::shared_ptr<stores::AuditFeed> feed = nullptr,
               std::string replica = {});
    std::string_view name() const override { return "audit"; }
    // Without a log it has work only while someone follows the feed.
    bool sometimes_idle() const override { return !log_; }
    bool idle() const override { return !recording(); }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // The record of a request the server answered outside the pipeline: resources/read,
    // prompts/get, or a tools/call refused before it reached the pipeline (unknown tool).
    // `error` is what it failed with (null: it succeeded).
    void served(const RequestContext& ctx, std::chrono::system_clock::time_point started,
                std::chrono::steady_clock::time_point started_steady, std::exception_ptr error);

    // The record's fields every request has (caller, session, profile, request id, trace),
    // and its arguments' digest (the arguments too when audit.include_arguments, redacted:
    // the values of secret-looking keys, and what the detectors of `payloads` find, counted
    // in toolport_redactions_total{where="audit"} under `source`).
    stores::AuditRecord base_record(const RequestContext& ctx, const Json* arguments,
                                    util::redaction::DetectorSet payloads, const std::string& source = {}) const;
    stores::AuditRecord base_record(const RequestContext& ctx, const Json* arguments) const {
        return base_record(ctx, arguments, payload_detectors_);
    }
    // The detectors for records made outside the pipeline (served()): the configuration's
    // `pipeline: {redact: {payloads}}`. A tool call's come from its policy.
    void set_payload_detectors(util::redaction::DetectorSet set) { payload_detectors_ = set; }

private:
    // Whether a record made now goes anywhere.
    bool recording() const { return log_ || (feed_ && feed_->active()); }
    void hand_over(stores::AuditRecord&& record);

    std::shared_ptr<stores::AuditLog> log_;
    std::shared_ptr<stores::AuditFeed> feed_;
    std::string replica_;
    util::redaction::DetectorSet payload_detectors_ = util::redaction::kAllDetectors;
};

}  // namespace toolport::pipeline
