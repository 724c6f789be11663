// Printing results: one block per spec, then the totals; or all of it as one JSON document.
#include <ostream>

#include <fmt/format.h>

#include "spec/spec.hpp"

namespace toolport::spec {

namespace {

// Every line of a (possibly multi-line) message, indented under its spec.
void print_indented(std::ostream& out, const std::string& text) {
    std::size_t start = 0;
    for (;;) {
        auto end = text.find('\n', start);
        out << "    " << text.substr(start, end == std::string::npos ? std::string::npos : end - start) << '\n';
        if (end == std::string::npos) break;
        start = end + 1;
    }
}

// Names are printed on one line whatever they hold.
std::string one_line(const std::string& text) {
    std::string out = text;
    for (char& c : out) {
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    return out;
}

const char* status_name(SpecResult::Status status) {
    switch (status) {
        case SpecResult::Status::passed: return "passed";
        case SpecResult::Status::failed: return "failed";
        case SpecResult::Status::skipped: return "skipped";
    }
    return "failed";
}

}  // namespace

void print_result(const SpecResult& result, std::ostream& out) {
    switch (result.status) {
        case SpecResult::Status::skipped: out << "- " << one_line(result.name) << " (skipped)\n"; return;
        case SpecResult::Status::passed:
            out << "✓ " << one_line(result.name) << " (" << result.elapsed.count() << " ms)\n";
            break;
        case SpecResult::Status::failed:
            // A spec that never ran (a load error) has no time to show.
            out << "✗ " << one_line(result.name);
            if (result.problems.empty()) out << " (" << result.elapsed.count() << " ms)";
            out << '\n';
            for (const auto& problem : result.problems) print_indented(out, problem);
            for (const auto& assertion : result.assertions) {
                if (!assertion.passed) print_indented(out, assertion.type + ": " + assertion.message);
            }
            break;
    }
    for (const auto& note : result.notes) print_indented(out, note);
}

void print_totals(const RunSummary& summary, std::ostream& out) {
    out << '\n';
    if (summary.skipped > 0) out << summary.skipped << " skipped\n";
    out << summary.passed << " passed, " << summary.failed << " failed\n";
}

void print_report(const RunSummary& summary, std::ostream& out) {
    for (const auto& result : summary.results) print_result(result, out);
    print_totals(summary, out);
}

Json report_json(const RunSummary& summary) {
    Json results = Json::array();
    for (const auto& result : summary.results) {
        Json assertions = Json::array();
        for (const auto& a : result.assertions) {
            assertions.push_back({{"type", a.type}, {"passed", a.passed}, {"message", a.message}});
        }
        Json entry = {
            {"name", result.name},
            {"file", result.file.generic_string()},
            {"status", status_name(result.status)},
            {"elapsed_ms", result.elapsed.count()},
            {"assertions", std::move(assertions)},
            {"problems", result.problems},
            {"notes", result.notes},
        };
        if (!result.suite.empty()) entry["suite"] = result.suite;
        results.push_back(std::move(entry));
    }
    return {{"results", std::move(results)},
            {"passed", summary.passed},
            {"failed", summary.failed},
            {"skipped", summary.skipped}};
}

}  // namespace toolport::spec
