// The records the tango tools return, as typed structures parsed defensively from the
// API's JSON (a field may be missing, null, or a number where a string was expected:
// naics_code is an integer on contracts and a string on forecasts; agency codes are
// numeric or alphanumeric). Parsing never throws: what is not there is null in the output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace toolport::tango {

using Text = std::optional<std::string>;
using Money = std::optional<double>;

struct Coded {  // NAICS, PSC, set-aside, status, ...: a code and what it means
    Text code;
    Text description;
};

struct Vendor {
    Text name;
    Text uei;
};

struct Agency {
    Text name;        // the agency (e.g. "Federal Acquisition Service")
    Text code;        // its code ("4732", "97F5")
    Text department;  // "General Services Administration"
    Text office_name;
    Text office_code;
};

struct Place {
    Text city;
    Text state;
    Text country;
    Text zip;
};

struct Period {
    Text start_date;
    Text end_date;             // current end
    Text ultimate_completion;  // with every option exercised
};

struct Contract {
    Text key;  // CONT_AWD_…
    Text piid;
    Text description;
    Text award_date;
    std::optional<int> fiscal_year;
    Vendor vendor;
    Agency awarding_agency;
    Money obligated;
    Money total_contract_value;
    Coded naics;
    Coded psc;
    Coded set_aside;
    Place place_of_performance;
    Period period_of_performance;
};

struct Grant {  // a Grants.gov funding opportunity
    std::optional<long long> grant_id;
    Text opportunity_number;
    Text title;
    Text agency_code;
    Coded status;  // P posted, F forecasted
    Text posted_date;
    Text response_date;
    std::vector<Coded> cfda_numbers;
    std::vector<Coded> funding_instruments;
    std::vector<Coded> funding_categories;
    std::vector<Coded> applicant_types;
    Money award_ceiling;
    Money award_floor;
    Money estimated_total_funding;
    std::optional<long long> expected_number_of_awards;
};

struct Opportunity {  // a SAM.gov contract opportunity (solicitation)
    Text opportunity_id;
    Text title;
    Text solicitation_number;
    Text notice_type;
    std::optional<bool> active;
    Agency agency;
    Text first_notice_date;
    Text last_notice_date;
    Text response_deadline;
    Coded naics;
    Coded psc;
    Coded set_aside;
    Place place_of_performance;
    Text sam_url;
    Text description;  // at most 500 characters
};

struct Forecast {  // an agency's planned procurement
    std::optional<long long> id;
    Text title;
    Text agency;
    Text source_system;
    Text anticipated_award_date;
    std::optional<int> fiscal_year;
    Text naics_code;
    Text set_aside;
    Text status;
};

struct Obligations {
    Money awards_obligated;
    std::optional<long long> awards_count;
    std::optional<long long> idv_count;
    Money subawards_obligated;
    std::optional<long long> subawards_count;
};

struct VendorProfile {
    Text uei;
    Text legal_business_name;
    Text dba_name;
    Text cage_code;
    std::optional<bool> registered;
    Text registration_status;
    Text sam_activation_date;
    Text sam_expiration_date;
    Text primary_naics;
    std::vector<Coded> naics_codes;
    std::vector<std::string> psc_codes;
    std::vector<Coded> business_types;
    Place physical_address;
    Text congressional_district;
    Text website;
    Text description;
    Obligations obligations_total;
    Obligations obligations_active;
};

Contract parse_contract(const Json& row);
Grant parse_grant(const Json& row);
Opportunity parse_opportunity(const Json& row);
Forecast parse_forecast(const Json& row);
VendorProfile parse_vendor_profile(const Json& entity);

Json to_json(const Contract& c);
Json to_json(const Grant& g);
Json to_json(const Opportunity& o);
Json to_json(const Forecast& f);
Json to_json(const VendorProfile& v);

// "Alzheimer&#39;s &ndash; Phase" → "Alzheimer's – Phase" (the entities Grants.gov titles carry).
std::string decode_html_entities(std::string_view text);

// The fields the normalizers read, as a `shape` for the API (so it returns them).
extern const char* const kContractShape;
extern const char* const kGrantShape;
extern const char* const kOpportunityShape;
extern const char* const kForecastShape;
extern const char* const kEntityShape;

}  // namespace toolport::tango
