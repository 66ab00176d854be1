import HRMCLI

await HRM.run(arguments: Array(CommandLine.arguments.dropFirst()))
