/// The GATT identifiers of Polar's PMD (Polar Measurement Data) service, as polar-ble-sdk's
/// `BlePMDClient` names them.
///
/// The control point is read (the feature bitmask), written (commands) and indicates responses;
/// the data characteristic notifies frames. Both need notifications enabled before the first
/// command, and the control point needs an encrypted (paired) link.
public enum PMDService {
    /// The service: FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8.
    public static let serviceUUID = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"
    /// The control point: read, write, indicate.
    public static let controlPointUUID = "fb005c81-02e7-f387-1cad-8acd2d8df0c8"
    /// The data characteristic: notify.
    public static let dataUUID = "fb005c82-02e7-f387-1cad-8acd2d8df0c8"
}

/// Time on a Polar sensor's clock: nanoseconds since 2000-01-01T00:00:00Z.
///
/// The SDK's documentation ("Time system in Polar devices") says so, and that an H10 whose clock
/// was never set since it last shut down counts from 2019-01-01T00:00:00Z (599,616,000 s after
/// the epoch). PMD itself has no command to set the clock: the SDK sets it with `setLocalTime`,
/// a query of Polar's file-transfer service (PFTP, protobuf), not of PMD.
public enum PMDTime {
    /// Seconds from the Unix epoch to the sensor's epoch, 2000-01-01T00:00:00Z.
    public static let epochUnixSeconds: Int64 = 946_684_800
    /// An H10's clock after it lost track of time: 2019-01-01T00:00:00Z, in sensor nanoseconds.
    public static let h10DefaultClock: UInt64 = 599_616_000_000_000_000

    /// A sensor time in nanoseconds since the Unix epoch (nil past Int64's range, year 2262).
    public static func unixNanoseconds(sensor: UInt64) -> Int64? {
        let (sum, overflow) = sensor.addingReportingOverflow(UInt64(epochUnixSeconds) * 1_000_000_000)
        guard !overflow, sum <= UInt64(Int64.max) else { return nil }
        return Int64(sum)
    }

    /// Whether a sensor time lies within the year after an H10's default clock (2019): the strap
    /// was not told the time, and its timestamps say nothing about the wall clock.
    public static func isUnsetH10Clock(_ sensor: UInt64) -> Bool {
        sensor >= h10DefaultClock && sensor < h10DefaultClock + 365 * 86_400 * 1_000_000_000
    }
}
