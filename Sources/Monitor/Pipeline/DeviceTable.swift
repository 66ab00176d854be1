/// A processor's state per strap, found by the device's address.
///
/// A few straps at most, and every event asks: a linear search whose comparison is nearly free
/// for the same `String` each time (a connection's events share one), where a dictionary hashes
/// the whole address on every event.
///
/// The addresses and the values are two arrays, not one of pairs: code that is not specialised
/// for `Value` (a table used from another module: hrm serve's feed, the metrics) would otherwise
/// ask the runtime for the pair's tuple metadata at every look-up, a fifth of hrm serve's CPU
/// without clients (Benchmarks/Serve/README.md, #29's ninth session).
package struct DeviceTable<Value> {
    /// The devices in the order they first came.
    package private(set) var devices: [String] = []
    /// `devices[i]`'s value is `values[i]`.
    private var values: [Value] = []

    /// An empty table.
    package init() {}

    /// The value for `device`, if it has one.
    package subscript(device: String) -> Value? {
        devices.firstIndex(of: device).map { values[$0] }
    }

    /// The value for `device`, made by `makeValue` when there is none yet; changed in place.
    package subscript(device: String, default makeValue: @autoclosure () -> Value) -> Value {
        get { self[device] ?? makeValue() }
        _modify {
            let index = index(of: device, default: makeValue)
            yield &values[index]
        }
    }

    /// Changes the value for `device` in place with `change`, the value made by `makeValue` first
    /// when there is none yet. For every notification: the subscript's `_modify` costs two heap
    /// allocations per call (its coroutine's captures), this none.
    package mutating func update<Result>(
        _ device: String, default makeValue: @autoclosure () -> Value, _ change: (inout Value) -> Result
    ) -> Result {
        change(&values[index(of: device, default: makeValue)])
    }

    /// Where `device`'s entry is, added with the value `makeValue` makes when there is none yet.
    private mutating func index(of device: String, default makeValue: () -> Value) -> Int {
        if let found = devices.firstIndex(of: device) { return found }
        devices.append(device)
        values.append(makeValue())
        return devices.count - 1
    }

    /// Adds `device` with the value `makeValue` makes, unless it is here already.
    package mutating func add(_ device: String, _ makeValue: @autoclosure () -> Value) {
        if !devices.contains(device) {
            devices.append(device)
            values.append(makeValue())
        }
    }
}

extension DeviceTable: Sendable where Value: Sendable {}
