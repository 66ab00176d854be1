import MQTT
import Monitor
import SessionLibrary

extension EventErrorCode {
    /// The MQTT broker refused, was not reachable, or failed.
    init(_ code: MQTTError.Code) { self.init(rawValue: code.rawValue) }

    /// Every code hrm sends, for the README check: the core's and MQTT's.
    static var all: [EventErrorCode] { core + MQTTError.Code.allCases.map(EventErrorCode.init) }
}
