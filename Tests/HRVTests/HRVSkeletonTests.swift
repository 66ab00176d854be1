import HRV
import Testing

@Test func meanOfTwoBeats() {
    let metrics = HRV.analyse(rr: [1000, 800], correcting: false)
    #expect(metrics.meanNN == 900)
    #expect(metrics.rmssd == 200)
}
