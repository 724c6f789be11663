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
//
// On a hot path, resolve the series once and keep the handle: an update through a handle
// builds no labels, looks nothing up and takes no lock (atomic updates), so it is safe
// from any thread.
//
//   Counter ok = metrics.counter("toolport_tool_calls_total", {{"tool", name}, {"code", "OK"}});
//   ok.increment();                      // per call
//   Histogram latency = metrics.histogram("toolport_tool_call_duration_seconds", {{"tool", name}});
//   latency.observe(0.0012);
//
// A handle is a pointer into its registry: it must not outlive it (the process-wide
// metrics() never goes away). Making a handle creates its series (at 0, visible in
// render()). A handle for a series the registry refuses (bad name or label, a name of
// another type, a full family) is empty: its updates are dropped, like the calls above.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace toolport::observability {

using Labels = std::vector<std::pair<std::string, std::string>>;

namespace detail {
struct MetricSeries;
struct MetricsImpl;
}  // namespace detail

class Metrics;

// A counter series, resolved once. Copyable; empty by default (updates dropped).
class Counter {
public:
    Counter() = default;
    // Drops (with a warning) an amount that is negative, infinite or NaN.
    void increment(double by = 1) const;
    explicit operator bool() const { return series_ != nullptr; }

private:
    friend class Metrics;
    explicit Counter(detail::MetricSeries* series) : series_(series) {}
    detail::MetricSeries* series_ = nullptr;
};

// A gauge series, resolved once.
class Gauge {
public:
    Gauge() = default;
    void set(double value) const;
    explicit operator bool() const { return series_ != nullptr; }

private:
    friend class Metrics;
    explicit Gauge(detail::MetricSeries* series) : series_(series) {}
    detail::MetricSeries* series_ = nullptr;
};

// A histogram series, resolved once (the same buckets as Metrics::observe).
class Histogram {
public:
    Histogram() = default;
    // Drops (with a warning) a NaN.
    void observe(double value) const;
    explicit operator bool() const { return series_ != nullptr; }

private:
    friend class Metrics;
    explicit Histogram(detail::MetricSeries* series) : series_(series) {}
    detail::MetricSeries* series_ = nullptr;
};

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
    // The same in OpenMetrics 1.0 text (GET /metrics with Accept: application/openmetrics-text):
    // counter families named without _total, `# EOF` at the end, and on each histogram bucket
    // the exemplar of its last observation made while a traced request ran (its trace_id and
    // span_id), which the 0.0.4 format has no place for.
    std::string render_openmetrics() const;

    // The current value of one series: a counter's or gauge's value, a histogram's number of
    // observations; nullopt when the series does not exist (yet).
    std::optional<double> value(std::string_view name, const Labels& labels = {}) const;

    // Handles to one series each, for updates on a hot path (see the top of this file).
    Counter counter(std::string_view name, const Labels& labels);
    Gauge gauge(std::string_view name, const Labels& labels);
    Histogram histogram(std::string_view name, const Labels& labels);

private:
    std::string render_as(bool openmetrics) const;

    detail::MetricsImpl* impl_;
};

// Handles (or a struct of them) made on first use and kept by a key the caller chooses,
// typically the label value that varies per call (a tool's name): one hash lookup per
// update instead of building labels. Not locked: keep one per thread, or guard it (a
// pipeline stage runs on the event loop thread).
//
//   HandleCache<Counter> calls;
//   calls.get(tool, [&] { return metrics().counter("toolport_x_total", {{"tool", tool}}); }).increment();
template <typename Handles>
class HandleCache {
public:
    template <typename Make>
    Handles& get(const std::string& key, Make&& make) {
        auto it = handles_.find(key);
        if (it == handles_.end()) it = handles_.emplace(key, make()).first;
        return it->second;
    }

private:
    std::unordered_map<std::string, Handles> handles_;
};

// The process-wide registry (the pipeline's stages and the transports report here).
Metrics& metrics();

}  // namespace toolport::observability
