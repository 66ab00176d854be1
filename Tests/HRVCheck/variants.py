#!/usr/bin/env python3
"""A Python replica of hrm's streaming ArtefactCorrector (Sources/HRV), with switches for each of
its departures from Lipponen & Tarvainen 2019: what measured the table of variants in the README's
HRV section. Not run by `make test` (the Swift corrector is checked there, by hrv_check.py and
Tests/HRVTests/CorpusTests.swift); run it with the HRV venv's python:

    .build/hrv-venv/bin/python Tests/HRVCheck/variants.py

Switches (FINAL is the shipped corrector): gate (the paper's Figure 1: mRR alone never flags but
for the second candidate), p (1: thresholds relative to the local median, 0: in ms), tw (threshold
window), clean_th (windows fed by the decided beats), clip/cf (an abnormal beat adds at most cf ×
the thresholds), mmin/de/dls (the confirmation: |mRR|, |dRR| for ectopic, |dRR| for long/short),
mb/la (median window before/after), warm (warm-up beats), npn/npnd (an ectopic verdict is
confirmed when its |dRR| is beyond npnd and the differences on both sides beyond npn × threshold 1,
against its sign). DEFAULT is the corrector before #22.
"""
import bisect, sys, math, glob, os
import numpy as np

def qd(sorted_vals):
    n=len(sorted_vals)
    if n==0: return 0.0
    def q(p):
        pos=p*(n-1); b=int(pos); f=pos-b
        if b+1>=n: return sorted_vals[b]
        return sorted_vals[b]+(sorted_vals[b+1]-sorted_vals[b])*f
    return (q(.75)-q(.25))/2

class SQ:
    def __init__(s,cap): s.cap=cap; s.arr=[]; s.sorted=[]
    def insert(s,v):
        s.arr.append(v)
        if len(s.arr)>s.cap:
            d=s.arr.pop(0); i=bisect.bisect_left(s.sorted,d); s.sorted.pop(i)
        bisect.insort(s.sorted,v)
    def qd(s): return qd(s.sorted)

C1,C2=0.13,0.17
def extreme(a,b,largest):
    if a is not None and b is not None: return max(a,b) if largest else min(a,b)
    if a is not None: return a
    if b is not None: return b
    return 0.0

def verdict(d,db,da,dan,m,above,second,K):
    large=abs(d)>1
    if K['gate'] and not (large or second): return 'normal'
    if large:
        s12=extreme(db,da,d>0)
        if d>1 and s12< -C1*d-C2: return 'ectopic'
        if d< -1 and s12> -C1*d+C2: return 'ectopic'
    ld=abs(m)>3
    if not(large or ld): return 'normal'
    s22=extreme(da,dan,d<0)
    if (d>1 and s22< -1) or (ld and above): return 'long'
    if (d< -1 and s22>1) or (ld and not above): return 'short'
    return 'normal'

def nominates(d,da,dan):
    return abs(d)>1 and da is not None and dan is not None and abs(da)<abs(dan)

def correction(prev,bprev,rr,nxt,anxt,verd,median,tol):
    def pl(v):
        return v if v is not None and abs(v-median)<tol else median
    before=pl(prev if prev is not None else bprev)
    beforeRR=pl(prev); afterRR=pl(nxt); afterPair=pl(anxt)
    best=[None,math.inf]
    def consider(c,value,pred):
        e=abs(value-pred)
        if e<tol and e<best[1]: best[0]=c; best[1]=e
    side=rr-median
    if side>0: consider(('missed',rr/2),rr/2,(beforeRR+afterRR)/2)
    if nxt is not None and side<0: consider(('extra',rr+nxt),rr+nxt,(beforeRR+afterPair)/2)
    pairsBack= verd=='ectopic' and prev is not None and side*(prev-median)<0
    if pairsBack:
        mean=(prev+rr)/2; consider(('pairPrev',mean),mean,(pl(bprev)+afterRR)/2)
    elif nxt is not None and side*(nxt-median)<0:
        mean=(rr+nxt)/2; consider(('pairNext',mean),mean,(beforeRR+afterPair)/2)
    return best[0] or ('interp',(before+afterRR)/2)

def mdev(rr,med): d=rr-med; return 2*d if d<0 else d

def correct(rrs,K):
    """Offline run of the streaming algorithm. Returns (nn values, usable flags, flagged input idx set)."""
    TW=K['tw']; MB=K['mb']; LA=K['la']; WARM=K['warm']; MIN=K['min']; ALPHA=K['alpha']
    n=len(rrs)
    dscale=SQ(TW); mscale=SQ(TW)
    medians=[None]*n
    out=[]; usable=[]; flagged=set()
    staged=None; bstaged=None; scorr=False; sidx=None; second=False
    dq=K.get('dscale_fn')
    # precompute stream: median of idx available once idx+LA received
    def median_of(i,received):
        lo=max(i-MB,0); hi=min(i+LA,received-1)
        return float(np.median(rrs[lo:hi+1]))
    pend=0  # next index to decide
    def stage(val,art,corr,src=None):
        nonlocal staged,bstaged,scorr,sidx
        us= staged is not None and art==0 and not scorr
        if staged is not None: out.append(staged[0]); usable.append(staged[1])
        bstaged = staged[0] if staged is not None else None
        staged=(val,us); scorr=corr; sidx= None if corr else src
    thresholds_at={}
    def decide(i,received):
        nonlocal second,staged,scorr
        rr=rrs[i]; med=medians[i]
        P=K.get('p',0); sc=(med/1000.0)**P
        th1=max(ALPHA*dscale.qd()*sc, MIN*med); th2=max(ALPHA*mscale.qd()*sc, MIN*med)
        if K.get('th1mult'): th1*=K['th1mult']
        prev=staged[0] if staged is not None else None
        nx=rrs[i+1] if i+1<received else None
        an=rrs[i+2] if i+2<received else None
        d=(rr-prev)/th1 if prev is not None else 0
        db=(prev-bstaged)/th1 if prev is not None and bstaged is not None else None
        da=(nx-rr)/th1 if nx is not None else None
        dan=(an-nx)/th1 if an is not None and nx is not None else None
        m=mdev(rr,med)/th2
        v=verdict(d,db,da,dan,m,rr>med,second,K)
        second= nominates(d,da,dan) and v!='ectopic'
        if K.get('trace') is not None and i in K['trace']: print(f"   trace i={i} v0={v} rr={rr:.0f} prev={prev} d={d:.2f} db={db} da={da} dan={dan} m={m:.2f} th1={th1:.0f} th2={th2:.0f} med={med:.0f}")
        npn = K.get('npn') and abs(d)>K.get('npnd',0) and db is not None and da is not None and d*db<0 and d*da<0 and min(abs(db),abs(da))>K['npn']
        if v=='ectopic' and 'mmin' in K and abs(m)<=K['mmin'] and abs(d)<=K.get('de',1e9) and not npn: v='normal'
        if v in('long','short') and 'mmin' in K and abs(m)<=K['mmin'] and abs(d)<=K.get('dls',1e9): v='normal'
        if K.get('clean_th') and (v=='normal' or K.get('clip')):
            cap1 = K.get("cf",1)*th1/sc if v!='normal' else 1e18; cap2 = K.get("cf",1)*th2/sc if v!='normal' else 1e18
            if prev is not None: dscale.insert(min(abs(rr-prev)/sc, cap1))
            mscale.insert(min(abs(mdev(rr,med))/sc, cap2))
        if v=='normal':
            stage(rr,0,False,i); return 1
        if K.get('debug'): print(f"  i={i} v={v} rr={rr:.0f} prev={prev} next={nx} d={d:.2f} db={db} da={da:.2f} dan={dan:.2f} m={m:.2f} th1={th1:.0f} th2={th2:.0f} med={med:.0f}")
        c=correction(prev,bstaged,rr,nx,an,v,med,th2) if not K.get('no_prev_pair') else None
        if not scorr: pass
        kind,val=c if c else (None,None)
        if scorr and kind=='pairPrev': pass
        if kind=='extra':
            second=False; stage(val,2,True,i); flagged.update([i,i+1]); return 2
        if kind=='missed':
            stage(val,1,True,i); stage(val,1,True); flagged.add(i); return 1
        if kind=='pairNext':
            second=False; stage(val,1,True,i); stage(val,1,True,i+1); flagged.update([i,i+1]); return 2
        if kind=='pairPrev':
            staged=(val,False); scorr=True; flagged.add(i-1)
            stage(val,1,True,i); flagged.add(i); return 1
        stage(val,1,True,i); flagged.add(i); return 1
    received=0
    for i in range(n):
        if i>0 and not K.get('clean_th'): dscale.insert(abs(rrs[i]-rrs[i-1])/(((rrs[i]+rrs[i-1])/2000.0)**K.get('p',0) if K.get('pd','local')=='local' else 1))
        received=i+1
        c=received-1-LA
        if c>=0:
            medians[c]=median_of(c,received)
            if not K.get('clean_th') or received<=WARM+LA: mscale.insert(abs(mdev(rrs[c],medians[c]))/((medians[c]/1000.0)**K.get('p',0)))
            if K.get('clean_th') and received<=WARM and c>0: dscale.insert(abs(rrs[c]-rrs[c-1])/((medians[c]/1000.0)**K.get('p',0)))
        if received>=WARM:
            while pend<received and medians[pend] is not None:
                pend+=decide(pend,received)
    for c in range(max(received-LA,0),received):
        medians[c]=median_of(c,received); mscale.insert(abs(mdev(rrs[c],medians[c]))/((medians[c]/1000.0)**K.get('p',0)))
    if received<WARM:
        for i in range(n): stage(rrs[i],0,False,i)
    else:
        while pend<received: pend+=decide(pend,received)
    if staged is not None: out.append(staged[0]); usable.append(staged[1])
    return out,usable,flagged

def rmssd(vals,usable):
    d=[vals[i]-vals[i-1] for i in range(1,len(vals)) if usable[i]]
    return math.sqrt(sum(x*x for x in d)/len(d))

DEFAULT=dict(tw=91,mb=8,la=2,warm=20,min=0.05,alpha=5.2,gate=False)
def load(path):
    return [float(l) for l in open(path) if l.strip() and not l.startswith('#')]
def truth_rmssd(path):
    v=load(path); d=np.diff(v); return float(np.sqrt(np.mean(d*d)))
NAMES="resting athlete sitter slow-breathing athlete-40 exercise resting-10-events ectopic-3pc loose-strap contact-drop".split()
def run(K, verbose=True):
    D=os.path.join(os.path.dirname(os.path.abspath(__file__)),'corpus')+'/'
    res={}
    for nme in NAMES:
        rr=load(D+nme+'.rr'); t=truth_rmssd(D+nme+'.truth')
        v,u,f=correct(rr,K); r=rmssd(v,u)
        res[nme]=(len(f),r,t,100*(r-t)/t)
    if verbose:
        print(' '.join(f"{k}:{a}/{e:+.1f}%" for k,(a,r,t,e) in res.items()))
    return res


CLEAN="resting athlete sitter slow-breathing athlete-40 exercise".split()
F=dict(DEFAULT,gate=True,p=1,tw=91,clean_th=True,clip=True,cf=0.5,mmin=2.5,de=2.0,dls=2.5,npn=1.0,npnd=1.5)
def nocf(K): K=dict(K); [K.pop(k) for k in ('mmin','de','dls')]; return K
rows=[('final',F),('no alternation rule',dict(F,npn=None)),('paper rule only (no confirmation)',nocf(F)),('mRR alone may flag (no Figure-1 gate)',dict(F,gate=False)),
('thresholds in ms, not relative',dict(F,p=0)),('threshold window 61',dict(F,tw=61)),('thresholds from raw RRs',dict(F,clean_th=False)),
('centred median 5+5 (lag 6)',dict(F,la=5,mb=5)),('warm-up 40 beats',dict(F,warm=40)),('before (main)',DEFAULT)]
def ectopic_series(seed):
    """A series like the corpus's ectopic-3pc from another seed: (clean ms, corrupted ms)."""
    import corpus
    base = corpus.clean_ticks(600, 55, 6, 5.0, 1.0, seed)
    rng = np.random.RandomState(seed + 1000)
    inject = corpus.Injector(base)
    while inject.position < len(base) - 2:
        if inject.position > 5 and rng.uniform() < 0.03:
            inject.ectopic(rng.uniform(0.6, 0.8))
        inject.keep(1)
    inject.rest()
    return corpus.milliseconds(base), corpus.milliseconds(inject.rr)


def table():
    """Per variant: the corpus; 60 more clean series (six settings, ten seeds); ten more
    3 %-ectopic series."""
    import corpus
    settings = [(600, 62, 4, 4.0, 1.2), (600, 50, 8, 5.5, 1.0), (600, 70, 3, 3.75, 3.0), (600, 65, 12, 10.0, 1.0),
                (600, 40, 6, 6.0, 1.0), (600, 150, 0.5, 2.0, 0.8)]
    clean_series = [corpus.milliseconds(corpus.clean_ticks(*setting, seed)) for setting in settings for seed in range(100, 110)]
    ectopic = [ectopic_series(seed) for seed in range(300, 310)]

    def true_rmssd(values):
        return float(np.sqrt(np.mean(np.diff(values) ** 2)))

    print("| variant | corpus, clean: beats changed (of 3600) | corpus, corrupted: worst RMSSD error "
          "| 60 more clean: beats changed, worst RMSSD error, bad series | 10 more 3 % ectopic: median, worst RMSSD error |")
    print("| --- | --- | --- | --- | --- |")
    for name, K in rows:
        r = run(K, verbose=False)
        flagged = sum(r[n][0] for n in CLEAN)
        worst_name = max((n for n in r if n not in CLEAN), key=lambda n: abs(r[n][3]))
        bad = changed = 0
        worst = 0.0
        for rr in clean_series:
            values, usable, f = correct(rr, K)
            error = abs(100 * (rmssd(values, usable) - true_rmssd(rr)) / true_rmssd(rr))
            changed += len(f)
            worst = max(worst, error)
            bad += len(f) > 6 or error > 1
        errors = []
        for clean, rr in ectopic:
            values, usable, f = correct(rr, K)
            errors.append(abs(100 * (rmssd(values, usable) - true_rmssd(clean)) / true_rmssd(clean)))
        print(f"| {name} | {flagged} | {abs(r[worst_name][3]):.1f} % ({worst_name}) | {changed}, {worst:.1f} %, {bad} of 60 "
              f"| {np.median(errors):.1f} %, {max(errors):.1f} % |")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    table()
