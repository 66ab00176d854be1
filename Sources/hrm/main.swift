import HRMCLI

await HRM.main()
