// Spectral with the OWASP API Security ruleset, run on the served OpenAPI document by
// test/flows/openapi-lint.test.ts (zero errors is the bar). What differs from the ruleset, and why:
import owasp from '@stoplight/spectral-owasp-ruleset'

// 1. Size limits (strings, arrays, integers: OWASP API4, unrestricted resource consumption) are
//    checked where clients send data: request bodies and parameters. Answers are the server's
//    own output; their lists are bounded by `limit`, their strings by what was accepted on input.
const requestSide = (type) => [
  `$.paths[*][*].requestBody..[?(@ && @.type=="${type}")]`,
  `$.paths[*][*].requestBody..[?(@ && @.type && @.type.constructor.name === "Array" && @.type.includes("${type}"))]`,
  `$.paths[*][*].parameters[?(@.schema && @.schema.type=="${type}")].schema`,
  `$.paths[*][*].parameters[*].schema..[?(@ && @.type=="${type}")]`,
]
const aliases = { ...owasp.aliases }
for (const [alias, type] of [
  ['StringProperties', 'string'],
  ['ArrayProperties', 'array'],
  ['IntegerProperties', 'integer'],
]) {
  aliases[alias] = { targets: aliases[alias].targets.map((target) => ({ ...target, given: requestSide(type) })) }
}

export default {
  extends: [[{ ...owasp, aliases }, 'recommended']],
  rules: {
    // 2. Staff use the same bearer JWT as everyone: what they may do is decided per route by
    //    their permissions (403 otherwise), which a second security scheme would not change.
    'owasp:api5:2023-admin-security-unique': 'off',
  },
  overrides: [
    {
      // 3. The liveness and readiness probes are exempt from rate limits by design (a load
      //    balancer polls them) and take no input to validate.
      files: ['**#/paths/~1health', '**#/paths/~1ready'],
      rules: { 'owasp:api4:2023-rate-limit': 'off', 'owasp:api4:2023-rate-limit-responses-429': 'off', 'owasp:api8:2023-define-error-validation': 'off' },
    },
  ],
}
