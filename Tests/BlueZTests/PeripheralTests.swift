import BlueZSimulator
import DBus
import Foundation
import Testing

@testable import BlueZ

/// The peripheral side against hrm-sim: registering, notifying a consumer, the refusals and
/// bluetoothd's Release. Each wait is for an event (the peripheral's, the simulator's log).
@Suite(.timeLimit(.minutes(1))) struct PeripheralTests {
    static let services = [
        ServedService(
            BluetoothUUID(0x180D),
            characteristics: [
                ServedCharacteristic(BluetoothUUID(0x2A37), flags: [.notify]),
                ServedCharacteristic(BluetoothUUID(0x2A38), flags: [.read], value: [1]),
            ])
    ]
    static let advertisement = AdvertisementSettings(
        localName: "hrm test", serviceUUIDs: [BluetoothUUID(0x180D)], appearance: 0x0341)

    static func consumer(unsubscribeAfter: Int) -> Scenario.Consumer {
        var consumer = Scenario.Consumer(address: "C0:FF:EE:00:00:01")
        consumer.connectAfter = 0
        consumer.unsubscribeAfter = unsubscribeAfter
        return consumer
    }

    static func records(_ log: String) throws -> [[String: Any]] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func aSubscribedConsumerGetsEveryValueInOrderAndNothingAfter() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("peripheral-\(UUID()).jsonl")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let values: [[UInt8]] = [[0x06, 0x48], [0x06, 0x48], [0x16, 0x49, 0x4D, 0x03], [0x00, 0x4A]]
        try await BlueZClientTests.withClient(
            "basic", adjust: { $0.consumers = [Self.consumer(unsubscribeAfter: values.count)] }, log: log
        ) { client in
            let adapter = try await client.selectAdapter()
            let peripheral = try await client.registerPeripheral(
                Self.services, advertisement: Self.advertisement, on: adapter)
            let measurement = try #require(peripheral.characteristic(BluetoothUUID(0x2A37)))
            #expect(!peripheral.notify(measurement, [0x06, 0x40]), "nobody subscribed yet")
            var asks = peripheral.events.makeAsyncIterator()
            var seen: [PeripheralEvent] = []
            while let ask = await asks.next() {
                seen.append(ask)
                if ask == .notifying(BluetoothUUID(0x2A37), true) { break }
            }
            #expect(
                seen.contains(.read(BluetoothUUID(0x2A38), device: BluetoothAddress("C0:FF:EE:00:00:01"))))
            for value in values { #expect(peripheral.notify(measurement, value)) }
            // The consumer leaves after the last: StopNotify, and nothing goes out any more.
            while let ask = await asks.next(), ask != .notifying(BluetoothUUID(0x2A37), false) {}
            #expect(!peripheral.notify(measurement, [0x06, 0x50]))
            #expect(await peripheral.unregister() == nil)
            #expect(await peripheral.unregister() == nil, "a second unregister does nothing")
        }
        let records = try Self.records(log)
        let received = records.filter { $0["event"] as? String == "consumer-value" }.compactMap {
            $0["hex"] as? String
        }
        #expect(received == ["0648", "0648", "1649" + "4d03", "004a"])
        let read = records.first { $0["event"] as? String == "consumer-read" }
        #expect(read?["hex"] as? String == "01")
        let names = records.compactMap {
            $0["event"] as? String == "call" ? $0["member"] as? String : $0["event"] as? String
        }
        #expect(names.contains("advertisement-unregistered") && names.contains("application-unregistered"))
    }

    @Test func aFullAdapterRefusesTheSecondAdvertisementAndKeepsTheFirst() async throws {
        try await BlueZClientTests.withClient("basic", adjust: { $0.adapters[0].maxAdvertisements = 1 }) {
            client in
            let adapter = try await client.selectAdapter()
            let first = try await client.registerPeripheral(
                Self.services, advertisement: Self.advertisement, on: adapter)
            do throws(BlueZError) {
                _ = try await client.registerPeripheral(
                    Self.services, advertisement: Self.advertisement, on: adapter)
                Issue.record("a second advertisement was taken")
            } catch {
                #expect(error.code == .peripheralRefused)
                #expect(error.reply == .notPermitted)
                #expect(error.message.contains("Maximum advertisements reached"), "\(error.message)")
            }
            #expect(await first.unregister() == nil)
        }
    }

    @Test func anAdapterWithoutThePeripheralRoleIsSaidSo() async throws {
        try await BlueZClientTests.withClient("basic", adjust: { $0.adapters[0].peripheral = false }) {
            client in
            let adapter = try await client.selectAdapter()
            #expect(!(await client.offersPeripheral(adapter)))
            do throws(BlueZError) {
                _ = try await client.registerPeripheral(
                    Self.services, advertisement: Self.advertisement, on: adapter)
                Issue.record("registered on an adapter without the peripheral role")
            } catch {
                #expect(error.code == .peripheralUnsupported)
                #expect(error.message.contains("hci0"))
            }
        }
    }

    @Test func aNewNameIsAdvertisedByRegisteringAgain() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("advertise-\(UUID()).jsonl")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let renamed = AdvertisementSettings(
            localName: "hrm Polar H10", serviceUUIDs: [BluetoothUUID(0x180D)], appearance: 0x0341)
        try await BlueZClientTests.withClient("basic", log: log) { client in
            let adapter = try await client.selectAdapter()
            let peripheral = try await client.registerPeripheral(
                Self.services, advertisement: Self.advertisement, on: adapter)
            #expect(await peripheral.advertise(renamed) == nil)
            #expect(await peripheral.advertise(renamed) == nil, "the same again does nothing")
            #expect(peripheral.advertisement == renamed)
            #expect(await peripheral.unregister() == nil)
        }
        let records = try Self.records(log)
        let names = records.filter { $0["event"] as? String == "advertisement-registered" }.compactMap {
            $0["local_name"] as? String
        }
        #expect(names == ["hrm test", "hrm Polar H10"])
        #expect(records.filter { $0["event"] as? String == "advertisement-unregistered" }.count == 2)
    }

    @Test func bluetoothdGoingAwayReleasesTheAdvertisement() async throws {
        try await BlueZClientTests.withClient("basic") { client, simulator in
            let adapter = try await client.selectAdapter()
            let peripheral = try await client.registerPeripheral(
                Self.services, advertisement: Self.advertisement, on: adapter)
            await simulator.stop()
            var asks = peripheral.events.makeAsyncIterator()
            #expect(await asks.next() == .advertisementReleased)
            peripheral.withdraw()
        }
    }

    @Test(arguments: [
        ("hrm Polar H10 7E102030", "hrm Polar H10 7E"),
        ("hrm", "hrm"),
        ("hrm Ωmega ÉÉÉÉÉÉÉ", "hrm Ωmega ÉÉ"),
    ])
    func theNameIsCutToFitThePacket(name: String, kept: String) {
        let settings = AdvertisementSettings(
            localName: name, serviceUUIDs: [BluetoothUUID(0x180D), BluetoothUUID(0x180F)], appearance: 0x0341)
        #expect(settings.localName == kept)
        #expect(settings.localName.utf8.count <= 16)
    }
}
