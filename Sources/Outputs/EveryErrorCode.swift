import MQTT
package import Monitor

extension EventErrorCode {
    /// Every code hrm sends, for the README's JSON-lines table (a test keeps the two in step): the
    /// core's, then those of the outputs' libraries (MQTT's).
    package static var all: [EventErrorCode] { core + MQTTError.Code.allCases.map(EventErrorCode.init) }
}
