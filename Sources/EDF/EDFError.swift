/// Why an EDF+ file could not be written as asked.
///
/// `code` is stable: tools match on its raw value.
public struct EDFError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; the raw value is the stable identifier tools match on.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// No signal has a sample: there would be no data record.
        case noSamples = "edf_no_samples"
        /// A signal's samples per data record is not positive.
        case badSampleCount = "edf_bad_sample_count"
        /// A signal's physical minimum equals its maximum, or is not finite.
        case badPhysicalRange = "edf_bad_physical_range"
        /// A signal's digital minimum is not below its maximum, or leaves -32768...32767.
        case badDigitalRange = "edf_bad_digital_range"
        /// A number does not fit its 8-character header field.
        case fieldTooLong = "edf_field_too_long"
        /// The start date cannot be written (a year before 1985 or a month or day out of range).
        case badStartDate = "edf_bad_start_date"
        /// More signals than the header's four characters can count, or none.
        case badSignalCount = "edf_bad_signal_count"
    }

    /// What went wrong.
    public let code: Code
    /// Details in words.
    public let detail: String

    /// An error `code` with `detail` in words.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    public var description: String { "\(code.rawValue): \(detail)" }
}
