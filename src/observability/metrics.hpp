// Metrics: counters, gauges and histograms with labels, rendered in the Prometheus text
// format at GET /metrics. Names follow Prometheus conventions (toolport_tool_calls_total,
// toolport_tool_call_duration_seconds, ...). Thread-safe; cheap enough to call on every
// tool call. A family's type is fixed by its first use: a call that uses the name as
// another type, a bad name or label, or a counter going down is dropped (with a warning in
// the log), never thrown.
//
//   metrics.increment("toolport_tool_calls_total", {{"tool", name}, {"code", "OK"}});
//   metrics.observe("toolport_tool_call_duration_seconds", {{"tool", name}}, 0.0012);
//   metrics.set("toolport_circuit_state", {{"service", "tango"}}, 1);
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolport::observability {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
public:
    Metrics();
    ~Metrics();
    Metrics(const Metrics&) = delete;
    Metrics& operator=(const Metrics&) = delete;

    // Declares a family with its HELP text (optional: undeclared families get a generic one).
    void describe(std::string_view name, std::string_view help);
    void increment(std::string_view name, const Labels& labels, double by = 1);
    void set(std::string_view name, const Labels& labels, double value);
    // Histogram in seconds-style buckets (0.0005 … 30); `value` in the family's unit.
    void observe(std::string_view name, const Labels& labels, double value);

    // The whole registry in Prometheus text exposition format 0.0.4.
    std::string render() const;

    // The current value of one series: a counter's or gauge's value, a histogram's number of
    // observations; nullopt when the series does not exist (yet).
    std::optional<double> value(std::string_view name, const Labels& labels = {}) const;

private:
    struct Impl;
    Impl* impl_;
};

// The process-wide registry (the pipeline's stages and the transports report here).
Metrics& metrics();

}  // namespace toolport::observability
