#!/usr/bin/env python3
"""What `hrm hrv`'s whole-run corrector (Sources/HRV: ArtefactCorrector.init(wholeRun:) and
EctopicPairs) gains from each of its choices, measured on a Python replica: the table behind the
figures in their documentation (issue #22). Not run by `make test`, which checks the Swift corrector
itself (hrv_check.py, sweep.py); run it with the HRV venv's python:

    .build/hrv-venv/bin/python Tests/HRVCheck/whole_variants.py

Each row is a variant of the replica (switches in the dict, documented at `correct_batch`); the
columns: the corpus's clean series (RRs changed) and corrupted ones (worst RMSSD error; "stray"
when an RR away from the injected ones changed), 60 more clean series (the six clean settings,
seeds 100-109: RRs changed, worst RMSSD error), and sweep.py's 50 mild-ectopic series (median and
worst RMSSD error, precision and recall of the RRs changed). It takes about two minutes.

The replica's switches: mb/la (median window before/after), passes/usecon (thresholds from centred
windows of the raw RRs, then again from what the previous pass decided, abnormal beats capped), trail
(the live corrector's trailing thresholds from the beats decided instead), force (pairs: s above
force × the local scale of |s|), pscale (median: that scale is the median of |s|; else its quartile
deviation), ptrail (that scale over the 91 RRs before, not around), pmin, pcf/pcl (c(j) below pcf ×
s(j) and above −pcl × s(j)), drop (RR j below RR j − 1 by drop × s(j)), skipcorr (no pair right
after a corrected beat), medfit (a missed or extra beat's correction may fit the local median).
"""
import bisect
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import variants as V  # noqa: E402


def cqd(values, half):
    """centred quartile deviation over i-half..i+half (clipped)"""
    n=len(values); out=[0.0]*n
    s=[]
    lo=0; hi=-1
    for i in range(n):
        a=max(0,i-half); b=min(n-1,i+half)
        while hi<b:
            hi+=1; bisect.insort(s, values[hi])
        while lo<a:
            j=bisect.bisect_left(s, values[lo]); s.pop(j); lo+=1
        out[i]=V.qd(s)
    return out

_X=np.array([-2,-1,2,3.])
def lag_w(t):
    w=[]
    for j,xj in enumerate(_X):
        p=1.0
        for k,xk in enumerate(_X):
            if k!=j: p*=(t-xk)/(xj-xk)
        w.append(p)
    return w
W0=lag_w(0); W1=lag_w(1)
def pair_stats(rrs,med):
    n=len(rrs); s=[0.0]*n; c=[0.0]*n
    for i in range(2,n-3):
        ys=[rrs[i-2],rrs[i-1],rrs[i+2],rrs[i+3]]
        a=sum(w*y for w,y in zip(W0,ys)); b=sum(w*y for w,y in zip(W1,ys))
        s[i]=((rrs[i+1]-b)-(rrs[i]-a))/2/med[i]; c[i]=((rrs[i+1]-b)+(rrs[i]-a))/2/med[i]
    return s,c
def cmed(values, half):
    n=len(values); out=[0.0]*n; s=[]; lo=0; hi=-1
    for i in range(n):
        a=max(0,i-half); b=min(n-1,i+half)
        while hi<b:
            hi+=1; bisect.insort(s, values[hi])
        while lo<a:
            j=bisect.bisect_left(s, values[lo]); s.pop(j); lo+=1
        out[i]=float(np.median(s))
    return out
def tmed(values):
    out=[]
    for i in range(len(values)):
        out.append(float(np.median(values[max(0,i-90):i+1])))
    return out
def correct_batch(rrs, K):
    n=len(rrs); MB=K.get('mb',5); LA=K.get('la',5); HALF=K.get('half',45); ALPHA=5.2; MIN=K.get('min',0.05)
    if n< K.get('warm',20):
        return list(rrs),[i>0 for i in range(n)],set()
    med=[float(np.median(rrs[max(0,i-MB):min(n,i+LA+1)])) for i in range(n)]
    draw=[abs(rrs[i]-rrs[i-1])/med[i] if i>0 else None for i in range(n)]
    mraw=[abs(V.mdev(rrs[i],med[i]))/med[i] for i in range(n)]
    # contributions: initially raw
    dc=[x for x in draw]; mc=list(mraw)
    ps,pc=pair_stats(rrs,med); pqd=cqd([abs(x) for x in ps],HALF) if K.get('pscale')!='median' else (cmed([abs(x) for x in ps],HALF) if not K.get('ptrail') else tmed([abs(x) for x in ps])); K=dict(K,ps=ps,pc=pc,pqd=pqd)
    passes=K.get('passes',2)
    for p in range(passes):
        dvals=[x if x is not None else 0.0 for x in dc]
        # exclude None at 0: approximate by using value of 1
        if dc[0] is None: dvals[0]=dvals[1] if n>1 else 0
        qd1=cqd(dvals,HALF); qd2=cqd(mc,HALF)
        th1=[max(ALPHA*qd1[i],MIN)*med[i] for i in range(n)]
        th2=[max(ALPHA*qd2[i],MIN)*med[i] for i in range(n)]
        out,usable,flagged,verd,dcon,mcon=decide_all(rrs,med,th1,th2,K)
        if p<passes-1 and K.get('usecon'):
            dc=[dcon[i] if dcon[i] is not None else dc[i] for i in range(n)]; mc=[mcon[i] if mcon[i] is not None else mc[i] for i in range(n)]
        elif p<passes-1:
            cf=K.get('cf',0.5)
            for i in range(n):
                if verd[i]!='normal':
                    if dc[i] is not None: dc[i]=min(draw[i], cf*th1[i]/med[i])
                    mc[i]=min(mraw[i], cf*th2[i]/med[i])
                else:
                    dc[i]=draw[i]; mc[i]=mraw[i]
    return out,usable,flagged

def correction_medfit(prev,bprev,rr,nxt,anxt,verd,median,tol):
    def pl(v):
        return v if v is not None and abs(v-median)<tol else median
    before=pl(prev if prev is not None else bprev)
    beforeRR=pl(prev); afterRR=pl(nxt); afterPair=pl(anxt)
    best=[None,math.inf]
    def consider(c,value,pred,alsomedian=False):
        e=abs(value-pred)
        if alsomedian: e=min(e,abs(value-median))
        if e<tol and e<best[1]: best[0]=c; best[1]=e
    side=rr-median
    if side>0: consider(('missed',rr/2),rr/2,(beforeRR+afterRR)/2,True)
    if nxt is not None and side<0: consider(('extra',rr+nxt),rr+nxt,(beforeRR+afterPair)/2,True)
    pairsBack= verd=='ectopic' and prev is not None and side*(prev-median)<0
    if pairsBack:
        mean=(prev+rr)/2; consider(('pairPrev',mean),mean,(pl(bprev)+afterRR)/2)
    elif nxt is not None and side*(nxt-median)<0:
        mean=(rr+nxt)/2; consider(('pairNext',mean),mean,(beforeRR+afterPair)/2)
    return best[0] or ('interp',(before+afterRR)/2)

def decide_all(rrs,med,th1s,th2s,K):
    n=len(rrs)
    out=[];usable=[];flagged=set(); verd=['normal']*n
    dcon=[None]*n; mcon=[None]*n
    st={'staged':None,'bstaged':None,'scorr':False,'second':False}
    def stage(val,art,corr):
        us= st['staged'] is not None and art==0 and not st['scorr']
        if st['staged'] is not None: out.append(st['staged'][0]); usable.append(st['staged'][1])
        st['bstaged']= st['staged'][0] if st['staged'] is not None else None
        st['staged']=(val,us); st['scorr']=corr
    def skipcon(j):
        if j<n: dcon[j]=dcon[j-1]; mcon[j]=mcon[j-1]
    forced=set()
    if K.get('force'):
        ps=K['ps']; pqd=K['pqd']; pc=K['pc']
        for j in range(n-1):
            if (K.get('drop') is None or (j>0 and rrs[j] < rrs[j-1] - K['drop']*ps[j]*med[j])) and ps[j]>K['force']*pqd[j] and ps[j]>K.get('pmin',0) and pc[j]<K.get('pcf',0.5)*ps[j] and pc[j]>-K.get('pcl',1.0)*ps[j] and ps[j]>=ps[j-1] and ps[j]>=ps[j+1]:
                forced.add(j)
    if K.get('trail'):
        dq=V.SQ(91); mq=V.SQ(91)
        W=K.get('warm',20)
        for j in range(min(W,n)):
            if j>0: dq.insert(abs(rrs[j]-rrs[j-1])/med[j])
            mq.insert(abs(V.mdev(rrs[j],med[j]))/med[j])
    i=0
    while i<n:
        rr=rrs[i]; m_=med[i]; th1=th1s[i]; th2=th2s[i]
        if K.get('trail'):
            th1=max(5.2*dq.qd(),0.05)*m_; th2=max(5.2*mq.qd(),0.05)*m_
        if i in forced and not (K.get('skipcorr') and st['scorr']):
            mean=(rrs[i]+rrs[i+1])/2
            st['second']=False
            if K.get('trail'):
                prev=st['staged'][0] if st['staged'] is not None else None
                if prev is not None and i>=K.get('warm',20): dq.insert(min(abs(rr-prev),0.5*th1)/m_)
                if i>=K.get('warm',20): mq.insert(min(abs(V.mdev(rr,m_)),0.5*th2)/m_)
            stage(mean,1,True); stage(mean,1,True); flagged.update([i,i+1]); verd[i]='ectopic'; i+=2; continue
        prev=st['staged'][0] if st['staged'] is not None else None
        bst=st['bstaged']
        nx=rrs[i+1] if i+1<n else None; an=rrs[i+2] if i+2<n else None
        d=(rr-prev)/th1 if prev is not None else 0
        db=(prev-bst)/th1 if prev is not None and bst is not None else None
        da=(nx-rr)/th1 if nx is not None else None
        dan=(an-nx)/th1 if an is not None and nx is not None else None
        m=V.mdev(rr,m_)/th2
        v=V.verdict(d,db,da,dan,m,rr>m_,st['second'],K)
        st['second']=V.nominates(d,da,dan) and v!='ectopic'
        npn = K.get('npn') and abs(d)>K.get('npnd',0) and db is not None and da is not None and d*db<0 and d*da<0 and min(abs(db),abs(da))>K['npn']
        if K.get('pz') and v!='normal':
            ps=K['ps']; pqd=K['pqd']
            for j in (i-1,i):
                if 0<=j<n and ps[j]>K['pz']*pqd[j] and abs(K['pc'][j])<K.get('pcf',0.5)*ps[j]: npn=True; v='ectopic'
        if v=='ectopic' and 'mmin' in K and abs(m)<=K['mmin'] and abs(d)<=K.get('de',1e9) and not npn: v='normal'
        if v in('long','short') and 'mmin' in K and abs(m)<=K['mmin'] and abs(d)<=K.get('dls',1e9): v='normal'
        verd[i]=v
        cap=1e18 if v=='normal' else K.get('cf',0.5)
        if prev is not None: dcon[i]=min(abs(rr-prev),cap*th1)/m_
        mcon[i]=min(abs(V.mdev(rr,m_)),cap*th2)/m_
        if K.get('trail') and i>=K.get('warm',20):
            if dcon[i] is not None: dq.insert(dcon[i])
            mq.insert(mcon[i])
        if v=='normal':
            stage(rr,0,False); i+=1; continue
        c=(correction_medfit if K.get('medfit') else V.correction)(prev if not st['scorr'] else None,bst,rr,nx,an,v,m_,th2)
        kind,val=c
        if kind=='extra':
            st['second']=False; stage(val,2,True); flagged.update([i,i+1]); skipcon(i+1); i+=2; continue
        if kind=='missed':
            stage(val,1,True); stage(val,1,True); flagged.add(i); i+=1; continue
        if kind=='pairNext':
            st['second']=False; stage(val,1,True); stage(val,1,True); flagged.update([i,i+1]); skipcon(i+1); i+=2; continue
        if kind=='pairPrev':
            st['staged']=(val,False); st['scorr']=True; flagged.add(i-1)
            stage(val,1,True); flagged.add(i); i+=1; continue
        stage(val,1,True); flagged.add(i); i+=1
    if st['staged'] is not None: out.append(st['staged'][0]); usable.append(st['staged'][1])
    return out,usable,flagged,verd,dcon,mcon


def ectopic(seed):
    base = corpus.clean_ticks(600, 55, 6, 5.0, 1.0, seed)
    rng = np.random.RandomState(seed + 1000)
    inj = corpus.Injector(base)
    while inj.position < len(base) - 2:
        if inj.position > 5 and rng.uniform() < 0.03:
            inj.ectopic(rng.uniform(0.6, 0.8))
        inj.keep(1)
    inj.rest()
    return corpus.milliseconds(base), corpus.milliseconds(inj.rr), [i for _,i in inj.artefacts]

def trmssd(v): return float(np.sqrt(np.mean(np.diff(v)**2)))
settings = [(600, 62, 4, 4.0, 1.2), (600, 50, 8, 5.5, 1.0), (600, 70, 3, 3.75, 3.0), (600, 65, 12, 10.0, 1.0),(600, 40, 6, 6.0, 1.0), (600, 150, 0.5, 2.0, 0.8)]
CLEANX=[corpus.milliseconds(corpus.clean_ticks(*s, seed)) for s in settings for seed in range(100,110)]
SWEEP=[ectopic(s) for s in range(300,350)]
SERIES=corpus.build()

def evaluate(fn, label):
    # corpus
    cl_changed=0; worst_cor=(0,'')
    for s in SERIES:
        rr=corpus.milliseconds(s.rr); clean=corpus.milliseconds(s.clean)
        v,u,f=fn(rr); e=100*(V.rmssd(v,u)-trmssd(clean))/trmssd(clean)
        if not s.corrupted: cl_changed+=len(f)
        else:
            places=[i for _,i in s.artefacts]
            stray=[i for i in f if not any(abs(i-p)<=1 for p in places)]
            if abs(e)>abs(worst_cor[0]): worst_cor=(e,s.name)
            if stray: worst_cor=(worst_cor[0], worst_cor[1]+f' stray{s.name}:{len(stray)}')
    ch=0; bad=0; wc=0
    for rr in CLEANX:
        v,u,f=fn(rr); e=abs(100*(V.rmssd(v,u)-trmssd(rr))/trmssd(rr)); ch+=len(f); wc=max(wc,e); bad+= len(f)>6 or e>1
    errs=[]; tp=fp=fn_=0
    for clean,rr,places in SWEEP:
        v,u,f=fn(rr); errs.append(abs(100*(V.rmssd(v,u)-trmssd(clean))/trmssd(clean)))
        P=set(places); tp+=len(f&P); fp+=len(f-P); fn_+=len(P-f)
    print(f"| {label} | {cl_changed} | {worst_cor[0]:+.1f} % ({worst_cor[1].strip()}) | {ch}, {wc:.1f} % | {np.median(errs):.2f} %, {max(errs):.1f} % | {tp/(tp+fp) if tp+fp else 1:.3f}, {tp/(tp+fn_):.3f} |", flush=True)



def main():
    live = V.F
    whole = dict(V.F, mb=5, la=5, passes=1, trail=True, pscale="median", force=6, pmin=0.08, pcf=0.75, pcl=1.0,
                 drop=0.25, skipcorr=True, medfit=True)
    print("| variant | corpus, clean: RRs changed | corpus, corrupted: worst RMSSD error | 60 more clean: RRs "
          "changed, worst error | 50 mild ectopic: median, worst error | precision, recall |")
    print("| --- | --- | --- | --- | --- | --- |")
    evaluate(lambda rr: V.correct(rr, live), "the live corrector")
    evaluate(lambda rr: correct_batch(rr, dict(whole, force=None)), "centred median, no pairs")
    evaluate(lambda rr: correct_batch(rr, dict(whole, force=None, trail=False, passes=3, usecon=True)),
             "centred median and the paper's centred thresholds (3 passes), no pairs")
    evaluate(lambda rr: correct_batch(rr, dict(whole, trail=False, passes=3, usecon=True)),
             "centred median and thresholds, with pairs")
    evaluate(lambda rr: correct_batch(rr, whole), "hrm hrv: centred median, live thresholds, pairs")
    evaluate(lambda rr: correct_batch(rr, dict(whole, drop=None)), "hrm hrv without the drop rule")
    evaluate(lambda rr: correct_batch(rr, dict(whole, skipcorr=False)), "hrm hrv with pairs after a corrected beat")
    evaluate(lambda rr: correct_batch(rr, dict(whole, pcf=1.0)), "hrm hrv with any share (|c| < s)")
    evaluate(lambda rr: correct_batch(rr, dict(whole, pscale=None, force=12)),
             "pair scale the quartile deviation of |s| (× 12)")
    evaluate(lambda rr: correct_batch(rr, dict(whole, force=7)), "pairs above 7 × the median of |s|")
    evaluate(lambda rr: correct_batch(rr, dict(whole, mb=8, la=2, ptrail=True)),
             "a live candidate: trailing median 8+2, pair scale over the 91 RRs before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
