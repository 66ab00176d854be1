/// A processor's state per strap, found by the device's address.
///
/// A few straps at most, and every event asks: a linear search whose comparison is nearly free
/// for the same `String` each time (a connection's events share one), where a dictionary hashes
/// the whole address on every event.
package struct DeviceTable<Value> {
    private var entries: [(device: String, value: Value)] = []

    /// An empty table.
    package init() {}

    /// The devices in the order they first came.
    package var devices: [String] { entries.map(\.device) }

    package subscript(device: String) -> Value? {
        entries.first { $0.device == device }?.value
    }

    /// The value for `device`, made by `makeValue` when there is none yet; changed in place.
    package subscript(device: String, default makeValue: @autoclosure () -> Value) -> Value {
        get { self[device] ?? makeValue() }
        _modify {
            let index = index(of: device, default: makeValue)
            yield &entries[index].value
        }
    }

    /// Changes the value for `device` in place with `change`, the value made by `makeValue` first
    /// when there is none yet. For every notification: the subscript's `_modify` costs two heap
    /// allocations per call (its coroutine's captures), this none.
    package mutating func update<Result>(
        _ device: String, default makeValue: @autoclosure () -> Value, _ change: (inout Value) -> Result
    ) -> Result {
        change(&entries[index(of: device, default: makeValue)].value)
    }

    /// Where `device`'s entry is, added with the value `makeValue` makes when there is none yet.
    private mutating func index(of device: String, default makeValue: () -> Value) -> Int {
        if let found = entries.firstIndex(where: { $0.device == device }) { return found }
        entries.append((device, makeValue()))
        return entries.count - 1
    }

    /// Adds `device` with the value `makeValue` makes, unless it is here already.
    package mutating func add(_ device: String, _ makeValue: @autoclosure () -> Value) {
        if !entries.contains(where: { $0.device == device }) { entries.append((device, makeValue())) }
    }
}

extension DeviceTable: Sendable where Value: Sendable {}
