import BrokerSupport
import MQTT
import Testing

@Suite struct BrokerURLTests {
    @Test func plainWithDefaults() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://broker.local")
        #expect(url.host == "broker.local")
        #expect(url.port == 1883)
        #expect(!url.tls)
        #expect(url.username == nil && url.password == nil)
        #expect(url.description == "mqtt://broker.local:1883")
    }

    @Test func tlsDefaultPort() throws {
        let url = try MQTTBrokerURL(parsing: "MQTTS://broker.example.org/")
        #expect(url.tls)
        #expect(url.port == 8883)
        #expect(url.description == "mqtts://broker.example.org:8883")
    }

    @Test func userPasswordAndPort() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://alice:s3cret@10.0.0.2:1884")
        #expect(url.host == "10.0.0.2")
        #expect(url.port == 1884)
        #expect(url.username == "alice")
        #expect(url.password == "s3cret")
        #expect(url.description == "mqtt://alice:***@10.0.0.2:1884")
        #expect(!url.description.contains("s3cret"))
        #expect(!"\(url)".contains("s3cret"))
    }

    @Test func percentDecoding() throws {
        let url = try MQTTBrokerURL(parsing: "mqtts://home%40assistant:p%3Aa%2Fs%25s%20w%C3%B6rd@ha.lan:8884")
        #expect(url.username == "home@assistant")
        #expect(url.password == "p:a/s%s wörd")
        #expect(url.description == "mqtts://home%40assistant:***@ha.lan:8884")
        // An unencoded '@' in the password: the last '@' ends the user information.
        let lenient = try MQTTBrokerURL(parsing: "mqtt://bob:a@b@host")
        #expect(lenient.password == "a@b")
        #expect(lenient.host == "host")
    }

    @Test func userWithoutPassword() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://bob@host:1")
        #expect(url.username == "bob")
        #expect(url.password == nil)
        #expect(url.port == 1)
        #expect(url.description == "mqtt://bob@host:1")
        let empty = try MQTTBrokerURL(parsing: "mqtt://bob:@host")
        #expect(empty.password == "")
    }

    @Test func ipv6() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://[::1]:1885")
        #expect(url.host == "::1")
        #expect(url.port == 1885)
        #expect(url.description == "mqtt://[::1]:1885")
        let noPort = try MQTTBrokerURL(parsing: "mqtts://u:p@[fe80::1:2]")
        #expect(noPort.host == "fe80::1:2")
        #expect(noPort.port == 8883)
    }

    @Test(arguments: [
        ("broker:1883", "no scheme"),
        ("http://broker", "unsupported scheme 'http'"),
        ("tcp://broker", "unsupported scheme 'tcp'"),
        ("mqtt://", "no host"),
        ("mqtt://:1883", "no host"),
        ("mqtt://user:pw@", "no host"),
        ("mqtt://broker:", "the port '' is not a number"),
        ("mqtt://broker:0", "the port '0' is not a number"),
        ("mqtt://broker:65536", "the port '65536' is not a number"),
        ("mqtt://broker:18x3", "the port '18x3' is not a number"),
        ("mqtt://broker:-1", "the port '-1' is not a number"),
        ("mqtt://broker/hrm/topic", "a path is not allowed"),
        ("mqtt://broker?x=1", "a query"),
        ("mqtt://broker#frag", "a fragment"),
        ("mqtt://[::1", "an unclosed '['"),
        ("mqtt://[]:1883", "is not an IPv6 address"),
        ("mqtt://[::1]x", "unexpected text after ']'"),
        ("mqtt://::1:1883", "not a valid name"),
        ("mqtt://bro ker", "not a valid name"),
        ("mqtt://:secret@broker", "an empty user name"),
        ("mqtt://a%4:secret@broker", "'%' in the user name"),
        ("mqtt://a:sec%zzret@broker", "'%' in the password"),
        ("mqtt://a:%ff@broker", "the password is not UTF-8"),
    ])
    func invalid(text: String, expected: String) {
        do {
            let url = try MQTTBrokerURL(parsing: text)
            Issue.record("\(text) parsed as \(url)")
        } catch {
            #expect(error.code == .invalidURL)
            #expect(error.code.rawValue == "mqtt_invalid_url")
            #expect(error.message.contains(expected), "\(text): \(error.message)")
            #expect(error.message.hasPrefix("broker URL: "))
        }
    }

    /// A message never repeats the text: it may hold a password.
    @Test func messagesDoNotShowThePassword() {
        for text in ["mqtt://u:hunter2@host:99999", "mqtt://u:hunter2@host/path", "ftp://u:hunter2@host"] {
            do {
                _ = try MQTTBrokerURL(parsing: text)
                Issue.record("\(text) parsed")
            } catch {
                #expect(!error.message.contains("hunter2"), "\(error.message)")
                #expect(!error.description.contains("hunter2"))
            }
        }
    }

    @Test func descriptionParsesBack() throws {
        let url = try MQTTBrokerURL(parsing: "mqtt://a%3Ab%20c@[2001:db8::7]:1999")
        let back = try MQTTBrokerURL(parsing: url.description)
        #expect(back.username == "a:b c")
        #expect(back.host == "2001:db8::7")
        #expect(back.port == 1999)
    }
}
