use posegpu::model::component_space;
use crate::data::*;

#[test]
fn scratch_debug() {
    let (src, tgt) = (CMU_WALK, KNIGHT);
    let (s, t) = (asset(src), asset(tgt));
    let plan = plan(src, tgt);
    let clip = &s.clips[0];
    let ts = &t.skeleton;
    let names = ts.names();
    let h = &plan.target().humanoid;
    let (th, sh, ft) = (h.left.thigh, h.left.shin, h.left.foot);
    println!("thigh {} shin {} foot {}", names[th], names[sh], names[ft]);
    for &time in &[0.0f32, 0.3, 0.6, 0.9] {
        let sl = clip.pose_at(s.skeleton.rest(), time);
        let fk = plan.apply(&sl);
        let ik = plan.apply_with_ik(&sl, IkWeights::FEET);
        let goals = plan.goals(&sl);
        let cf = component_space(ts.parents(), &fk);
        let ci = component_space(ts.parents(), &ik);
        println!("t={time} goal {:?}", goals[0].map(|g| g.translation));
        let up = plan.target().body.up;
        println!("  up {up:?} hip_h {} lab {} lbc {}", plan.target().body.hip_height, (cf[sh].translation-cf[th].translation).length(), (cf[ft].translation-cf[sh].translation).length());
        if let Some(g) = goals[0] { println!("  goal dist {}", (g.translation - cf[th].translation).length()); }
        for b in [th, sh, ft] {
            println!("  {} fk {:?} ik {:?}", names[b], cf[b].translation, ci[b].translation);
        }
    }
}
