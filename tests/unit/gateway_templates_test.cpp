// Gateway: which served URIs an upstream's resources/updated for a templated URI concerns
// (served_uris_of_update), decided by matching the upstream's own template patterns.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "providers/gateway/template_updates.hpp"

using namespace toolport::gateway;

namespace {
using Uris = std::vector<std::string>;
}

TEST(GatewayTemplates, UriOfAnUnprefixedTemplateIsServedAsItIs) {
    const std::vector<ServedTemplate> own = {{"docs://{+path}", "docs://{+path}"}};
    EXPECT_EQ(served_uris_of_update("docs://a/b.md", own), Uris{"docs://a/b.md"});
}

TEST(GatewayTemplates, UriOfACollidingTemplateGetsThePrefix) {
    const std::vector<ServedTemplate> own = {{"gh+file:///{+path}", "file:///{+path}"}};
    EXPECT_EQ(served_uris_of_update("file:///README.md", own), Uris{"gh+file:///README.md"});
}

TEST(GatewayTemplates, OnlyTheTemplateThatMatchesDecides) {
    // One upstream, one colliding template (prefixed) and one of its own (not): before, any
    // prefixed template of the upstream made every templated URI prefixed.
    const std::vector<ServedTemplate> own = {
        {"gh+file:///{+path}", "file:///{+path}"},
        {"search://issues{?q,state}", "search://issues{?q,state}"},
        {"gh+repo://{owner}/{repo}{/path*}", "repo://{owner}/{repo}{/path*}"},
    };
    EXPECT_EQ(served_uris_of_update("search://issues?state=open&q=crash", own),
              Uris{"search://issues?state=open&q=crash"});
    EXPECT_EQ(served_uris_of_update("file:///src/main.cpp", own), Uris{"gh+file:///src/main.cpp"});
    EXPECT_EQ(served_uris_of_update("repo://octo/hello/src/a.c", own), Uris{"gh+repo://octo/hello/src/a.c"});
    EXPECT_TRUE(served_uris_of_update("other://x", own).empty());  // the caller sends it as it is
}

TEST(GatewayTemplates, EveryFormAClientMayHaveSubscribedToOnce) {
    const std::vector<ServedTemplate> own = {
        {"a+x://{id}", "x://{id}"},
        {"x://{+any}", "x://{+any}"},
        {"a+x://{other}", "x://{other}"},
    };
    EXPECT_EQ(served_uris_of_update("x://7", own), (Uris{"a+x://7", "x://7"}));
}

TEST(GatewayTemplates, MalformedUpstreamTemplatesMatchNothing) {
    const std::vector<ServedTemplate> own = {{"a+x://{id", "x://{id"}, {"x://{}", "x://{}"}};
    EXPECT_TRUE(served_uris_of_update("x://{id", own).empty());
    EXPECT_TRUE(served_uris_of_update("x://7", own).empty());
}
