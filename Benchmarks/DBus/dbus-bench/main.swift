import DBus

let address = CommandLine.arguments[1]
print("connecting")
let c = try await Connection(address: address)
print("connected", c.uniqueName)
let owner = try await c.nameOwner(c.uniqueName)
print("owner", owner as Any)
await c.close()
print("closed")
