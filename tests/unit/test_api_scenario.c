/* test_api_scenario.c — master/api/api_scenario.c: which Content-Type values name YAML. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api_scenario.h"

static void test_yaml_types(void **state)
{
    (void)state;
    static const char *const yaml[] = {
        "application/yaml", "application/x-yaml", "text/yaml", "Application/YAML",
        "application/yaml; charset=utf-8", "text/yaml;charset=UTF-8", " application/x-yaml ",
        "application/yaml\t; q=1",
    };
    for (size_t i = 0; i < sizeof yaml / sizeof yaml[0]; i++)
        if (!api_scenario_is_yaml(yaml[i]))
            fail_msg("'%s' should be YAML", yaml[i]);
}

static void test_other_types_are_json(void **state)
{
    (void)state;
    static const char *const json[] = {
        "application/json", "application/yamlx", "text/yaml-ish", "yaml", "text/plain", "",
        ";application/yaml", "application/ yaml", "application/x-www-form-urlencoded",
    };
    for (size_t i = 0; i < sizeof json / sizeof json[0]; i++)
        if (api_scenario_is_yaml(json[i]))
            fail_msg("'%s' should not be YAML", json[i]);
    assert_false(api_scenario_is_yaml(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_types),
        cmocka_unit_test(test_other_types_are_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
