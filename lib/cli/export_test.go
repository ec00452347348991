package cli

// ParseOne is parseOne, for the tests of package cli_test.
var ParseOne = parseOne
