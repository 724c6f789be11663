// The `tango` pack: U.S. federal contracting data from MakeGov's Tango API
// (https://tango.makegov.com), as five tools built for agents (seed 000):
//
//   search_tango_contracts      contract awards (FPDS)
//   search_tango_grants         grant funding opportunities (Grants.gov)
//   get_tango_vendor_profile    a vendor's registration, obligations and recent awards
//   search_tango_opportunities  solicitations (SAM.gov) and agency forecasts
//   get_tango_spending_summary  obligated dollars grouped by agency, vendor, NAICS, PSC, month
//
// Every call runs through the pipeline as service "tango": cached 5 minutes (the tools are
// read-only), at least 100 ms between requests to Tango across every replica sharing the
// store, the call timeout, a circuit breaker, and _meta.downstream_api_calls counting the
// real requests.
#include "providers/tango/tango_pack.hpp"

#include <spdlog/spdlog.h>

#include "pipeline/policy.hpp"

namespace toolport::providers {

namespace {

class TangoSource final : public Source {
public:
    explicit TangoSource(const SourceSettings& settings) { pack_.settings = tango::TangoSettings::from(settings); }

    void start(SourceContext& context) override {
        pack_.http = &context.http();
        pipeline::ServicePolicy service;
        service.rate_limit.min_spacing = pack_.settings.min_spacing;
        service.rate_limit.max_wait = std::chrono::seconds(30);
        context.set_service_defaults(tango::kService, service);
        if (!pack_.settings.client_key_header.empty()) context.forward_client_header(pack_.settings.client_key_header);
        for (auto make : {tango::search_contracts_tool, tango::search_grants_tool, tango::vendor_profile_tool,
                          tango::search_opportunities_tool, tango::spending_summary_tool}) {
            context.add_tool(make(pack_));
        }
        spdlog::info("tango: {} with {}", pack_.settings.base_url,
                     pack_.settings.server_api_key.empty() ? "no server key (callers must send api_key or the " +
                                                                 pack_.settings.client_key_header + " header)"
                                                           : "the server's key from " + pack_.settings.api_key_env);
    }

private:
    tango::TangoPack pack_;
};

}  // namespace

std::unique_ptr<Source> make_tango_source(const SourceSettings& settings) {
    return std::make_unique<TangoSource>(settings);
}

}  // namespace toolport::providers
