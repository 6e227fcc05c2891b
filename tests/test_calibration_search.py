"""The package's one calibration search, and every calibration pinned to the values it returned before.

``PINNED_*`` were computed at commit 1c6377e, before the calibrations (the analytic Gaussian's Brent root in
mu, the RDP round-up loop, the vocabulary threshold's own round-up loop, dp-accounting's
``calibrate_dp_mechanism`` for DP-SVI, the advanced-composition bisection, the spectral split's geometric
bisection) were moved onto :func:`topicdp.rdp.smallest_meeting`. Each value must come back to within the
search's resolution:

* exact calibrations (Gaussian analytic / rdp / paper, ``gdp_epsilon``, the vocabulary's sigma and tau, the
  paper baselines, the spectral split, dp-vem): relative ``1e-12``. The searches resolve to a few ulps
  (Brent at 4 ulp, then upward steps of 1, 2, 4 ulp); the largest difference measured was 4.6e-14, on the
  advanced-composition baseline, whose evaluated total carries that much rounding noise; 2.9e-15 elsewhere.
* DP-SVI's accountant calibration (``rel_tol = 1e-3``): both searches stop within ``rel_tol / 10`` of the
  smallest z, so they may differ by ``2e-4``; measured at most 5.6e-5. The returned z must also meet the target
  on a fresh dp-accounting accountant.

"Not worse" is checked one-sidedly too: no returned noise exceeds the pinned one by more than the tolerance.
"""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

from benchmarks.privacy.paper_baselines import paper_baseline_epsilon, paper_baseline_noise_multiplier
from topicdp.baselines.accounting import (
    accountant_epsilon,
    calibrate_noise_multiplier,
    make_scheme,
)
from topicdp.rdp import (
    NoBracketError,
    calibrate_event,
    calibrate_gaussian,
    gaussian_delta,
    gdp_delta,
    gdp_epsilon,
    smallest_meeting,
)
from topicdp.spectral.accounting import DEFAULT_SPLITS, SpectralBudget
from topicdp.variational import DPVariationalEM
from topicdp.vocabulary import calibrate_selection, threshold_delta

EXACT_RTOL = 1e-12
DPSVI_RTOL = 2e-4

#: (epsilon, delta, sensitivity, count, method, sigma)
PINNED_GAUSSIAN = [
    (0.1, 1e-10, 0.5, 1, 'analytic', 27.103147918450652),
    (0.1, 1e-10, 0.5, 1, 'rdp', 28.526748769941168),
    (0.1, 1e-10, 0.5, 1, 'paper', 109020.20204249487),
    (0.1, 1e-10, 0.5, 10, 'analytic', 85.70767918275561),
    (0.1, 1e-10, 0.5, 10, 'rdp', 90.20950035242076),
    (0.1, 1e-10, 0.5, 10, 'paper', 344752.1494260247),
    (0.1, 1e-10, 1.0, 1, 'analytic', 54.206295836901305),
    (0.1, 1e-10, 1.0, 1, 'rdp', 57.053497539882336),
    (0.1, 1e-10, 1.0, 1, 'paper', 218040.40408498974),
    (0.1, 1e-10, 1.0, 10, 'analytic', 171.41535836551122),
    (0.1, 1e-10, 1.0, 10, 'rdp', 180.41900070484152),
    (0.1, 1e-10, 1.0, 10, 'paper', 689504.2988520494),
    (0.1, 1e-10, 1.4142135623730951, 1, 'analytic', 76.65927873855406),
    (0.1, 1e-10, 1.4142135623730951, 1, 'rdp', 80.68583000172161),
    (0.1, 1e-10, 1.4142135623730951, 1, 'paper', 308355.6966023025),
    (0.1, 1e-10, 1.4142135623730951, 10, 'analytic', 242.41792459955036),
    (0.1, 1e-10, 1.4142135623730951, 10, 'rdp', 255.1509977065879),
    (0.1, 1e-10, 1.4142135623730951, 10, 'paper', 975106.33075112),
    (0.1, 1e-06, 0.5, 1, 'analytic', 18.15234521309793),
    (0.1, 1e-06, 0.5, 1, 'rdp', 19.73196023405485),
    (0.1, 1e-06, 0.5, 1, 'paper', 1090.2020885412726),
    (0.1, 1e-06, 0.5, 10, 'analytic', 57.40275574704399),
    (0.1, 1e-06, 0.5, 10, 'rdp', 62.39793703948247),
    (0.1, 1e-06, 0.5, 10, 'paper', 3447.521709662976),
    (0.1, 1e-06, 1.0, 1, 'analytic', 36.30469042619586),
    (0.1, 1e-06, 1.0, 1, 'rdp', 39.4639204681097),
    (0.1, 1e-06, 1.0, 1, 'paper', 2180.404177082545),
    (0.1, 1e-06, 1.0, 10, 'analytic', 114.80551149408798),
    (0.1, 1e-06, 1.0, 10, 'rdp', 124.79587407896494),
    (0.1, 1e-06, 1.0, 10, 'paper', 6895.043419325952),
    (0.1, 1e-06, 1.4142135623730951, 1, 'analytic', 51.34258557848284),
    (0.1, 1e-06, 1.4142135623730951, 1, 'rdp', 55.810411550413924),
    (0.1, 1e-06, 1.4142135623730951, 1, 'paper', 3083.5571586850833),
    (0.1, 1e-06, 1.4142135623730951, 10, 'analytic', 162.35951139011948),
    (0.1, 1e-06, 1.4142135623730951, 10, 'rdp', 176.48801765067722),
    (0.1, 1e-06, 1.4142135623730951, 10, 'paper', 9751.063916762121),
    (0.1, 0.001, 0.5, 1, 'analytic', 8.702198101515574),
    (0.1, 0.001, 0.5, 1, 'rdp', 10.283398951771401),
    (0.1, 0.001, 0.5, 1, 'paper', 34.4621854323369),
    (0.1, 0.001, 0.5, 10, 'analytic', 27.51876665078239),
    (0.1, 0.001, 0.5, 10, 'rdp', 32.51896277578563),
    (0.1, 0.001, 0.5, 10, 'paper', 108.97899911325915),
    (0.1, 0.001, 1.0, 1, 'analytic', 17.404396203031148),
    (0.1, 0.001, 1.0, 1, 'rdp', 20.566797903542803),
    (0.1, 0.001, 1.0, 1, 'paper', 68.9243708646738),
    (0.1, 0.001, 1.0, 10, 'analytic', 55.03753330156478),
    (0.1, 0.001, 1.0, 10, 'rdp', 65.03792555157126),
    (0.1, 0.001, 1.0, 10, 'paper', 217.9579982265183),
    (0.1, 0.001, 1.4142135623730951, 1, 'analytic', 24.613533155241456),
    (0.1, 0.001, 1.4142135623730951, 1, 'rdp', 29.08584452977677),
    (0.1, 0.001, 1.4142135623730951, 1, 'paper', 97.47378005485471),
    (0.1, 0.001, 1.4142135623730951, 10, 'analytic', 77.83482603463376),
    (0.1, 0.001, 1.4142135623730951, 10, 'rdp', 91.97751638364375),
    (0.1, 0.001, 1.4142135623730951, 10, 'paper', 308.2391571196332),
    (1.0, 1e-10, 0.5, 1, 'analytic', 2.9338888748152643),
    (1.0, 1e-10, 0.5, 1, 'rdp', 3.072335521877765),
    (1.0, 1e-10, 0.5, 1, 'paper', 26971.669737255794),
    (1.0, 1e-10, 0.5, 10, 'analytic', 9.277771246244853),
    (1.0, 1e-10, 0.5, 10, 'rdp', 9.715577985375814),
    (1.0, 1e-10, 0.5, 10, 'paper', 85291.90866756353),
    (1.0, 1e-10, 1.0, 1, 'analytic', 5.867777749630529),
    (1.0, 1e-10, 1.0, 1, 'rdp', 6.14467104375553),
    (1.0, 1e-10, 1.0, 1, 'paper', 53943.33947451159),
    (1.0, 1e-10, 1.0, 10, 'analytic', 18.555542492489707),
    (1.0, 1e-10, 1.0, 10, 'rdp', 19.43115597075163),
    (1.0, 1e-10, 1.0, 10, 'paper', 170583.81733512707),
    (1.0, 1e-10, 1.4142135623730951, 1, 'analytic', 8.298290874518573),
    (1.0, 1e-10, 1.4142135623730951, 1, 'rdp', 8.689877126400312),
    (1.0, 1e-10, 1.4142135623730951, 1, 'paper', 76287.40228455023),
    (1.0, 1e-10, 1.4142135623730951, 10, 'analytic', 26.24149985006921),
    (1.0, 1e-10, 1.4142135623730951, 10, 'rdp', 27.479804306423897),
    (1.0, 1e-10, 1.4142135623730951, 10, 'paper', 241241.9479967114),
    (1.0, 1e-06, 0.5, 1, 'analytic', 2.1123394446634185),
    (1.0, 1e-06, 0.5, 1, 'rdp', 2.265438558518222),
    (1.0, 1e-06, 0.5, 1, 'paper', 269.71687944177967),
    (1.0, 1e-06, 0.5, 10, 'analytic', 6.679803836551609),
    (1.0, 1e-06, 0.5, 10, 'rdp', 7.163945744086229),
    (1.0, 1e-06, 0.5, 10, 'paper', 852.919662429068),
    (1.0, 1e-06, 1.0, 1, 'analytic', 4.224678889326837),
    (1.0, 1e-06, 1.0, 1, 'rdp', 4.530877117036444),
    (1.0, 1e-06, 1.0, 1, 'paper', 539.4337588835593),
    (1.0, 1e-06, 1.0, 10, 'analytic', 13.359607673103218),
    (1.0, 1e-06, 1.0, 10, 'rdp', 14.327891488172458),
    (1.0, 1e-06, 1.0, 10, 'paper', 1705.839324858136),
    (1.0, 1e-06, 1.4142135623730951, 1, 'analytic', 5.974598181957317),
    (1.0, 1e-06, 1.4142135623730951, 1, 'rdp', 6.407627868358849),
    (1.0, 1e-06, 1.4142135623730951, 1, 'paper', 762.8745378150277),
    (1.0, 1e-06, 1.4142135623730951, 10, 'analytic', 18.893338359286236),
    (1.0, 1e-06, 1.4142135623730951, 10, 'rdp', 20.26269846278352),
    (1.0, 1e-06, 1.4142135623730951, 10, 'paper', 2412.42110844374),
    (1.0, 0.001, 0.5, 1, 'analytic', 1.2873285093186038),
    (1.0, 0.001, 0.5, 1, 'rdp', 1.4507668133402385),
    (1.0, 0.001, 0.5, 1, 'paper', 8.535438720378297),
    (1.0, 0.001, 0.5, 10, 'analytic', 4.070890186316082),
    (1.0, 0.001, 0.5, 10, 'rdp', 4.5877274839395055),
    (1.0, 0.001, 0.5, 10, 'paper', 26.991427185188464),
    (1.0, 0.001, 1.0, 1, 'analytic', 2.5746570186372075),
    (1.0, 0.001, 1.0, 1, 'rdp', 2.901533626680477),
    (1.0, 0.001, 1.0, 1, 'paper', 17.070877440756593),
    (1.0, 0.001, 1.0, 10, 'analytic', 8.141780372632164),
    (1.0, 0.001, 1.0, 10, 'rdp', 9.175454967879011),
    (1.0, 0.001, 1.0, 10, 'paper', 53.98285437037693),
    (1.0, 0.001, 1.4142135623730951, 1, 'analytic', 3.6411148742158175),
    (1.0, 0.001, 1.4142135623730951, 1, 'rdp', 4.103388206533124),
    (1.0, 0.001, 1.4142135623730951, 1, 'paper', 24.141866398326886),
    (1.0, 0.001, 1.4142135623730951, 10, 'analytic', 11.514216224839476),
    (1.0, 0.001, 1.4142135623730951, 10, 'rdp', 12.976052856518088),
    (1.0, 0.001, 1.4142135623730951, 10, 'paper', 76.34328478619877),
    (3.0, 1e-10, 0.5, 1, 'analytic', 1.0311265894537034),
    (3.0, 1e-10, 0.5, 1, 'rdp', 1.0763940406549193),
    (3.0, 1e-10, 0.5, 1, 'paper', 8092.874539335342),
    (3.0, 1e-10, 0.5, 10, 'analytic', 3.2607085786350583),
    (3.0, 1e-10, 0.5, 10, 'rdp', 3.4038568283014254),
    (3.0, 1e-10, 0.5, 10, 'paper', 25591.916362285614),
    (3.0, 1e-10, 1.0, 1, 'analytic', 2.062253178907407),
    (3.0, 1e-10, 1.0, 1, 'rdp', 2.1527880813098386),
    (3.0, 1e-10, 1.0, 1, 'paper', 16185.749078670684),
    (3.0, 1e-10, 1.0, 10, 'analytic', 6.5214171572701165),
    (3.0, 1e-10, 1.0, 10, 'rdp', 6.807713656602851),
    (3.0, 1e-10, 1.0, 10, 'paper', 51183.83272457123),
    (3.0, 1e-10, 1.4142135623730951, 1, 'analytic', 2.9164664146578834),
    (3.0, 1e-10, 1.4142135623730951, 1, 'rdp', 3.0445021015035274),
    (3.0, 1e-10, 1.4142135623730951, 1, 'paper', 22890.10586422391),
    (3.0, 1e-10, 1.4142135623730951, 10, 'analytic', 9.222676589703994),
    (3.0, 1e-10, 1.4142135623730951, 10, 'rdp', 9.627560981920288),
    (3.0, 1e-10, 1.4142135623730951, 10, 'paper', 72384.87041332448),
    (3.0, 1e-06, 0.5, 1, 'analytic', 0.7719307088878202),
    (3.0, 1e-06, 0.5, 1, 'rdp', 0.8218398218943272),
    (3.0, 1e-06, 0.5, 1, 'paper', 80.92951803613101),
    (3.0, 1e-06, 0.5, 10, 'analytic', 2.4410592359138943),
    (3.0, 1e-06, 0.5, 10, 'rdp', 2.5988857090131905),
    (3.0, 1e-06, 0.5, 10, 'paper', 255.92160693385105),
    (3.0, 1e-06, 1.0, 1, 'analytic', 1.5438614177756405),
    (3.0, 1e-06, 1.0, 1, 'rdp', 1.6436796437886545),
    (3.0, 1e-06, 1.0, 1, 'paper', 161.85903607226203),
    (3.0, 1e-06, 1.0, 10, 'analytic', 4.882118471827789),
    (3.0, 1e-06, 1.0, 10, 'rdp', 5.197771418026381),
    (3.0, 1e-06, 1.0, 10, 'paper', 511.8432138677021),
    (3.0, 1e-06, 1.4142135623730951, 1, 'analytic', 2.183349755442866),
    (3.0, 1e-06, 1.4142135623730951, 1, 'rdp', 2.324514044442493),
    (3.0, 1e-06, 1.4142135623730951, 1, 'paper', 228.90324400602898),
    (3.0, 1e-06, 1.4142135623730951, 10, 'analytic', 6.904358155971069),
    (3.0, 1e-06, 1.4142135623730951, 10, 'rdp', 7.350758833488142),
    (3.0, 1e-06, 1.4142135623730951, 10, 'paper', 723.855614860337),
    (3.0, 0.001, 0.5, 1, 'analytic', 0.5186258592437403),
    (3.0, 0.001, 0.5, 1, 'rdp', 0.5727740171068865),
    (3.0, 0.001, 0.5, 1, 'paper', 2.5833138558850584),
    (3.0, 0.001, 0.5, 10, 'analytic', 1.6400389686721104),
    (3.0, 0.001, 0.5, 10, 'rdp', 1.8112704786220082),
    (3.0, 0.001, 0.5, 10, 'paper', 8.169155695668755),
    (3.0, 0.001, 1.0, 1, 'analytic', 1.0372517184874805),
    (3.0, 0.001, 1.0, 1, 'rdp', 1.145548034213773),
    (3.0, 0.001, 1.0, 1, 'paper', 5.166627711770117),
    (3.0, 0.001, 1.0, 10, 'analytic', 3.280077937344221),
    (3.0, 0.001, 1.0, 10, 'rdp', 3.6225409572440164),
    (3.0, 0.001, 1.0, 10, 'paper', 16.33831139133751),
    (3.0, 0.001, 1.4142135623730951, 1, 'analytic', 1.4668954478797946),
    (3.0, 0.001, 1.4142135623730951, 1, 'rdp', 1.6200495663349561),
    (3.0, 0.001, 1.4142135623730951, 1, 'paper', 7.3067149817179695),
    (3.0, 0.001, 1.4142135623730951, 10, 'analytic', 4.638730704632964),
    (3.0, 0.001, 1.4142135623730951, 10, 'rdp', 5.123046551986502),
    (3.0, 0.001, 1.4142135623730951, 10, 'paper', 23.10586155590434),
    (10.0, 1e-10, 0.5, 1, 'analytic', 0.34152198361374064),
    (10.0, 1e-10, 0.5, 1, 'rdp', 0.3546382215461496),
    (10.0, 1e-10, 0.5, 1, 'paper', 238.22807083143894),
    (10.0, 1e-10, 0.5, 10, 'analytic', 1.0799873392381234),
    (10.0, 1e-10, 0.5, 10, 'rdp', 1.1214645254372333),
    (10.0, 1e-10, 0.5, 10, 'paper', 753.3433064152697),
    (10.0, 1e-10, 1.0, 1, 'analytic', 0.6830439672274813),
    (10.0, 1e-10, 1.0, 1, 'rdp', 0.7092764430922992),
    (10.0, 1e-10, 1.0, 1, 'paper', 476.4561416628779),
    (10.0, 1e-10, 1.0, 10, 'analytic', 2.159974678476247),
    (10.0, 1e-10, 1.0, 10, 'rdp', 2.2429290508744666),
    (10.0, 1e-10, 1.0, 10, 'paper', 1506.6866128305394),
    (10.0, 1e-10, 1.4142135623730951, 1, 'analytic', 0.9659700421502279),
    (10.0, 1e-10, 1.4142135623730951, 1, 'rdp', 1.0030683652928782),
    (10.0, 1e-10, 1.4142135623730951, 1, 'paper', 673.8107374155986),
    (10.0, 1e-10, 1.4142135623730951, 10, 'analytic', 3.0546654846835732),
    (10.0, 1e-10, 1.4142135623730951, 10, 'rdp', 3.1719806831872845),
    (10.0, 1e-10, 1.4142135623730951, 10, 'paper', 2130.7766421109295),
    (10.0, 1e-06, 0.5, 1, 'analytic', 0.2705434159091831),
    (10.0, 1e-06, 0.5, 1, 'rdp', 0.2849681792716645),
    (10.0, 1e-06, 0.5, 1, 'paper', 2.408184132260072),
    (10.0, 1e-06, 0.5, 10, 'analytic', 0.8555334002352522),
    (10.0, 1e-06, 0.5, 10, 'rdp', 0.9011485071696426),
    (10.0, 1e-06, 0.5, 10, 'paper', 7.615346883018),
    (10.0, 1e-06, 1.0, 1, 'analytic', 0.5410868318183663),
    (10.0, 1e-06, 1.0, 1, 'rdp', 0.569936358543329),
    (10.0, 1e-06, 1.0, 1, 'paper', 4.816368264520144),
    (10.0, 1e-06, 1.0, 10, 'analytic', 1.7110668004705043),
    (10.0, 1e-06, 1.0, 10, 'rdp', 1.8022970143392851),
    (10.0, 1e-06, 1.0, 10, 'paper', 15.230693766036),
    (10.0, 1e-06, 1.4142135623730951, 1, 'analytic', 0.7652123359790234),
    (10.0, 1e-06, 1.4142135623730951, 1, 'rdp', 0.806011727941511),
    (10.0, 1e-06, 1.4142135623730951, 1, 'paper', 6.811373321067755),
    (10.0, 1e-06, 1.4142135623730951, 10, 'analytic', 2.419813875351726),
    (10.0, 1e-06, 1.4142135623730951, 10, 'rdp', 2.548832881103154),
    (10.0, 1e-06, 1.4142135623730951, 10, 'paper', 21.539453688279462),
    (10.0, 0.001, 0.5, 1, 'analytic', 0.2030297790120693),
    (10.0, 0.001, 0.5, 1, 'rdp', 0.21897930426429588),
    (10.0, 0.001, 0.5, 1, 'paper', 0.2362663217282767),
    (10.0, 0.001, 0.5, 10, 'analytic', 0.6420365345187896),
    (10.0, 0.001, 0.5, 10, 'rdp', 0.6924733619141973),
    (10.0, 0.001, 0.5, 10, 'paper', 0.7471397110514844),
    (10.0, 0.001, 1.0, 1, 'analytic', 0.4060595580241386),
    (10.0, 0.001, 1.0, 1, 'rdp', 0.43795860852859175),
    (10.0, 0.001, 1.0, 1, 'paper', 0.4725326434565534),
    (10.0, 0.001, 1.0, 10, 'analytic', 1.2840730690375792),
    (10.0, 0.001, 1.0, 10, 'rdp', 1.3849467238283946),
    (10.0, 0.001, 1.0, 10, 'paper', 1.4942794221029687),
    (10.0, 0.001, 1.4142135623730951, 1, 'analytic', 0.5742549340889616),
    (10.0, 0.001, 1.4142135623730951, 1, 'rdp', 0.6193670039391836),
    (10.0, 0.001, 1.4142135623730951, 1, 'paper', 0.668262073040268),
    (10.0, 0.001, 1.4142135623730951, 10, 'analytic', 1.8159535493109882),
    (10.0, 0.001, 1.4142135623730951, 10, 'rdp', 1.9586104400023008),
    (10.0, 0.001, 1.4142135623730951, 10, 'paper', 2.113230224713049),
]

#: (mu, delta, epsilon)
PINNED_GDP_EPSILON = [
    (0.01, 1e-10, 0.053092033377843975),
    (0.01, 1e-05, 0.027219419814576748),
    (0.01, 0.1, 0.0),
    (0.3, 1e-10, 1.8064314034648068),
    (0.3, 1e-05, 1.1317748966408947),
    (0.3, 0.1, 0.04581318579566401),
    (1.0, 1e-10, 6.547924066864951),
    (1.0, 1e-05, 4.377178095681225),
    (1.0, 0.1, 1.1603338527916178),
    (5.0, 1e-10, 43.662903869019914),
    (5.0, 1e-05, 33.10373233592247),
    (5.0, 0.1, 18.024305780955533),
]

#: (epsilon, delta, max_words_per_unit, neighbours, sigma, tau)
PINNED_SELECTION = [
    (0.3, 1e-09, 1, 'replace-one', 25.225221540114962, 155.11122589783395),
    (0.3, 1e-09, 1, 'add-remove', 17.836925207948255, 109.97309288933133),
    (0.3, 1e-09, 50, 'replace-one', 25.225221540114962, 169.30234110645645),
    (0.3, 1e-09, 50, 'add-remove', 17.836925207948255, 119.75625482337081),
    (0.3, 1e-09, 300, 'replace-one', 25.225221540114962, 175.69848457534204),
    (0.3, 1e-09, 300, 'add-remove', 17.836925207948255, 124.25450008529701),
    (0.3, 1e-06, 1, 'replace-one', 19.07542630872725, 94.31008927280953),
    (0.3, 1e-06, 1, 'add-remove', 13.488363296925309, 66.98019687792785),
    (0.3, 1e-06, 50, 'replace-one', 19.07542630872725, 107.19273672585659),
    (0.3, 1e-06, 50, 'add-remove', 13.488363296925309, 75.83813238903491),
    (0.3, 1e-06, 300, 'replace-one', 19.07542630872725, 112.87511923240942),
    (0.3, 1e-06, 300, 'add-remove', 13.488363296925309, 79.8316724343494),
    (1.0, 1e-09, 1, 'replace-one', 7.9331721407973115, 49.46700283415265),
    (1.0, 1e-09, 1, 'add-remove', 5.609599817077978, 35.271346367818005),
    (1.0, 1e-09, 50, 'replace-one', 7.9331721407973115, 53.34145742886326),
    (1.0, 1e-09, 50, 'add-remove', 5.609599817077978, 37.7595276225602),
    (1.0, 1e-09, 300, 'replace-one', 7.9331721407973115, 55.29563646181598),
    (1.0, 1e-09, 300, 'add-remove', 5.609599817077978, 39.11682971004882),
    (1.0, 1e-06, 1, 'replace-one', 6.173261319614101, 31.19736259179318),
    (1.0, 1e-06, 1, 'add-remove', 4.365154941135745, 22.35275986260806),
    (1.0, 1e-06, 50, 'replace-one', 6.173261319614101, 34.78577130100042),
    (1.0, 1e-06, 50, 'add-remove', 4.365154941135745, 24.638676131979253),
    (1.0, 1e-06, 300, 'replace-one', 6.173261319614101, 36.568121889264695),
    (1.0, 1e-06, 300, 'add-remove', 4.365154941135745, 25.87447716102793),
    (3.0, 1e-09, 1, 'replace-one', 2.8002126363490003, 18.107647656380692),
    (3.0, 1e-09, 1, 'add-remove', 1.980049343926638, 13.096933667978002),
    (3.0, 1e-09, 50, 'replace-one', 2.8002126363490003, 18.91971213587244),
    (3.0, 1e-09, 50, 'add-remove', 1.980049343926638, 13.419678105610284),
    (3.0, 1e-09, 300, 'replace-one', 2.8002126363490003, 19.555341641043764),
    (3.0, 1e-09, 300, 'add-remove', 1.980049343926638, 13.844624880674353),
    (3.0, 1e-06, 1, 'replace-one', 2.24532720297076, 11.983328936671656),
    (3.0, 1e-06, 1, 'add-remove', 1.5876860912032478, 8.766386371093198),
    (3.0, 1e-06, 50, 'replace-one', 2.24532720297076, 12.742200317766809),
    (3.0, 1e-06, 50, 'add-remove', 1.5876860912032478, 9.05151760816775),
    (3.0, 1e-06, 300, 'replace-one', 2.24532720297076, 13.337225488880566),
    (3.0, 1e-06, 300, 'add-remove', 1.5876860912032478, 9.44775278327415),
    (30.0, 1e-09, 1, 'replace-one', 0.37059004348949875, 3.264086593523674),
    (30.0, 1e-09, 1, 'add-remove', 0.2620467327916421, 2.6009509834746725),
    (30.0, 1e-09, 50, 'replace-one', 0.37059004348949875, 3.264086593523674),
    (30.0, 1e-09, 50, 'add-remove', 0.2620467327916421, 2.6009509834746725),
    (30.0, 1e-09, 300, 'replace-one', 0.37059004348949875, 3.264086593523674),
    (30.0, 1e-09, 300, 'add-remove', 0.2620467327916421, 2.6009509834746725),
    (30.0, 1e-06, 1, 'replace-one', 0.325692156850561, 2.593168285692898),
    (30.0, 1e-06, 1, 'add-remove', 0.23029913268830438, 2.1265400983858602),
    (30.0, 1e-06, 50, 'replace-one', 0.325692156850561, 2.593168285692898),
    (30.0, 1e-06, 50, 'add-remove', 0.23029913268830438, 2.1265400983858602),
    (30.0, 1e-06, 300, 'replace-one', 0.325692156850561, 2.593168285692898),
    (30.0, 1e-06, 300, 'add-remove', 0.23029913268830438, 2.1265400983858602),
]

#: (epsilon, delta, sampling_rate, n_iterations, composition, z)
PINNED_BASELINE = [
    (0.5, 1e-05, 2.5e-05, 16000, 'zcdp', 0.8986484130763776),
    (0.5, 1e-05, 2.5e-05, 16000, 'advanced', 1.3798197075876937),
    (0.5, 1e-05, 2.5e-05, 16000, 'linear', 5.736355348507053),
    (0.5, 1e-05, 0.01, 200, 'zcdp', 2.9198501997524153),
    (0.5, 1e-05, 0.01, 200, 'advanced', 9.61297071167802),
    (0.5, 1e-05, 0.01, 200, 'linear', 22.318545712719803),
    (0.5, 0.0001, 2.5e-05, 16000, 'zcdp', 0.797626939782751),
    (0.5, 0.0001, 2.5e-05, 16000, 'advanced', 1.2006060452207752),
    (0.5, 0.0001, 2.5e-05, 16000, 'linear', 5.089499956976168),
    (0.5, 0.0001, 0.01, 200, 'zcdp', 2.5752825070973318),
    (0.5, 0.0001, 0.01, 200, 'advanced', 8.081269733996459),
    (0.5, 0.0001, 0.01, 200, 'linear', 20.14542880647693),
    (1.0, 1e-05, 2.5e-05, 16000, 'zcdp', 0.797575855145947),
    (1.0, 1e-05, 2.5e-05, 16000, 'advanced', 1.1598743140841195),
    (1.0, 1e-05, 2.5e-05, 16000, 'linear', 3.713193086417149),
    (1.0, 1e-05, 0.01, 200, 'zcdp', 2.142176630707304),
    (1.0, 1e-05, 0.01, 200, 'advanced', 5.890911429675875),
    (1.0, 1e-05, 0.01, 200, 'linear', 12.271300700222367),
    (1.0, 0.0001, 2.5e-05, 16000, 'zcdp', 0.708965806498109),
    (1.0, 0.0001, 2.5e-05, 16000, 'advanced', 1.01419881829617),
    (1.0, 0.0001, 2.5e-05, 16000, 'linear', 3.294477922899731),
    (1.0, 0.0001, 0.01, 200, 'zcdp', 1.8965878869773258),
    (1.0, 0.0001, 0.01, 200, 'advanced', 5.018315274016411),
    (1.0, 0.0001, 0.01, 200, 'linear', 11.076466083464826),
    (4.0, 1e-05, 2.5e-05, 16000, 'zcdp', 0.6531346899594119),
    (4.0, 1e-05, 2.5e-05, 16000, 'advanced', 0.8856280825845105),
    (4.0, 1e-05, 2.5e-05, 16000, 'linear', 1.9398733901672485),
    (4.0, 1e-05, 0.01, 200, 'zcdp', 1.3357451780307281),
    (4.0, 1e-05, 0.01, 200, 'advanced', 2.828013461336294),
    (4.0, 1e-05, 0.01, 200, 'linear', 4.510827574728874),
    (4.0, 0.0001, 2.5e-05, 16000, 'zcdp', 0.5823429542072566),
    (4.0, 0.0001, 2.5e-05, 16000, 'advanced', 0.7806998825387029),
    (4.0, 0.0001, 2.5e-05, 16000, 'linear', 1.721125163273745),
    (4.0, 0.0001, 0.01, 200, 'zcdp', 1.190583964639694),
    (4.0, 0.0001, 0.01, 200, 'advanced', 2.4748900195576113),
    (4.0, 0.0001, 0.01, 200, 'linear', 4.0716163559529495),
]

#: (configuration, accounting, epsilon, delta, ((release, sigma / sensitivity), ...))
PINNED_SPECTRAL = [
    (1, 'exact', 0.5, 1e-07, (('e3', 12.721814823789572), ('e4', 17.9913630618023), ('e8', 17.9913630618023))),
    (1, 'exact', 3.0, 1e-06, (('e3', 2.1833497554428654), ('e4', 3.087722835551281), ('e8', 3.087722835551281))),
    (1, 'exact', 10.0, 0.0001, (('e3', 0.6438421220947931), ('e4', 0.9105302610935305), ('e8', 0.9105302610935305))),
    (1, 'rdp', 0.5, 1e-07, (('e3', 13.574036623091246), ('e4', 19.19658668852473), ('e8', 19.19658668852473))),
    (1, 'rdp', 3.0, 1e-06, (('e3', 2.3245140444424925), ('e4', 3.2873592875773086), ('e8', 3.2873592875773086))),
    (1, 'rdp', 10.0, 0.0001, (('e3', 0.6872651244321154), ('e4', 0.9719396599179304), ('e8', 0.9719396599179304))),
    (1, 'simple', 0.5, 1e-07, (('e3', 18.210517262104727), ('e4', 35.235565067251166), ('e8', 35.235565067251166))),
    (1, 'simple', 3.0, 1e-06, (('e3', 3.0482424175839733), ('e4', 5.8189861405739505), ('e8', 5.8189861405739505))),
    (1, 'simple', 10.0, 0.0001, (('e3', 0.8428030516726556), ('e4', 1.5298260510333648), ('e8', 1.5298260510333648))),
    (2, 'exact', 0.5, 1e-07, (('e6', 12.721814823789572), ('e8', 12.721814823789572))),
    (2, 'exact', 3.0, 1e-06, (('e6', 2.1833497554428654), ('e8', 2.1833497554428654))),
    (2, 'exact', 10.0, 0.0001, (('e6', 0.6438421220947931), ('e8', 0.6438421220947931))),
    (2, 'rdp', 0.5, 1e-07, (('e6', 13.574036623091246), ('e8', 13.574036623091246))),
    (2, 'rdp', 3.0, 1e-06, (('e6', 2.3245140444424925), ('e8', 2.3245140444424925))),
    (2, 'rdp', 10.0, 0.0001, (('e6', 0.6872651244321154), ('e8', 0.6872651244321154))),
    (2, 'simple', 0.5, 1e-07, (('e6', 17.894235980155464), ('e8', 17.894235980155464))),
    (2, 'simple', 3.0, 1e-06, (('e6', 2.9956558861517335), ('e8', 2.9956558861517335))),
    (2, 'simple', 10.0, 0.0001, (('e6', 0.825754549390055), ('e8', 0.825754549390055))),
    (3, 'rdp', 0.5, 1e-07, (('e7', 14.326335203588128), ('e8', 14.326335203588128))),
    (3, 'rdp', 3.0, 1e-06, (('e7', 2.453671874027228), ('e8', 2.453671874027228))),
    (3, 'rdp', 10.0, 0.0001, (('e7', 0.7220301893174312), ('e8', 0.7220301893174312))),
    (3, 'simple', 0.5, 1e-07, (('e7', 19.871633995410537), ('e8', 19.871633995410537))),
    (3, 'simple', 3.0, 1e-06, (('e7', 3.317968987073462), ('e8', 3.317968987073462))),
    (3, 'simple', 10.0, 0.0001, (('e7', 0.9072129717848475), ('e8', 0.9072129717848475))),
    (4, 'rdp', 0.5, 1e-07, (('e8', 14.326335203588128), ('e9', 14.326335203588128))),
    (4, 'rdp', 3.0, 1e-06, (('e8', 2.453671874027228), ('e9', 2.453671874027228))),
    (4, 'rdp', 10.0, 0.0001, (('e8', 0.7220301893174312), ('e9', 0.7220301893174312))),
    (4, 'simple', 0.5, 1e-07, (('e8', 19.871633995410537), ('e9', 19.871633995410537))),
    (4, 'simple', 3.0, 1e-06, (('e8', 3.317968987073462), ('e9', 3.317968987073462))),
    (4, 'simple', 10.0, 0.0001, (('e8', 0.9072129717848475), ('e9', 0.9072129717848475))),
]

#: (epsilon, delta, neighbours, n_iterations, sigma)
PINNED_DP_VEM = [
    (0.5, 1e-06, 'add-remove', 1, 8.057618480725043),
    (0.5, 1e-06, 'add-remove', 10, 25.48042691575668),
    (0.5, 1e-06, 'replace-one', 1, 11.39519333586945),
    (0.5, 1e-06, 'replace-one', 10, 36.034765319319554),
    (3.0, 1e-06, 'add-remove', 1, 1.5438614177756405),
    (3.0, 1e-06, 'add-remove', 10, 4.882118471827789),
    (3.0, 1e-06, 'replace-one', 1, 2.183349755442866),
    (3.0, 1e-06, 'replace-one', 10, 6.904358155971069),
]

#: (sampling, n_docs, n_iterations, batch_size, epsilon, delta, accountant, z)
PINNED_DPSVI = [
    ('poisson', 5000, 200, 50, 1.0, 1e-05, 'rdp', 1.1259401786545362),
    ('poisson', 5000, 200, 50, 1.0, 1e-05, 'paper', 2.142176630707304),
    ('poisson', 5000, 200, 50, 3.0, 1e-05, 'rdp', 0.7420922012441746),
    ('poisson', 5000, 200, 50, 3.0, 1e-05, 'paper', 1.4557245019254914),
    ('fixed', 2000, 100, 40, 1.0, 1e-05, 'rdp', 1.877549443673233),
    ('fixed', 2000, 100, 40, 1.0, 1e-05, 'paper', 2.481317713607756),
    ('fixed', 2000, 100, 40, 3.0, 1e-05, 'rdp', 0.9260618891879884),
    ('fixed', 2000, 100, 40, 3.0, 1e-05, 'paper', 1.6036149090230636),
    ('poisson', 400000, 2000, 10, 1.0, 1e-05, 'rdp', 0.664688427661381),
    ('poisson', 400000, 2000, 10, 1.0, 1e-05, 'paper', 0.6802086795820729),
    ('poisson', 400000, 2000, 10, 3.0, 1e-05, 'rdp', 0.43230288756960095),
    ('poisson', 400000, 2000, 10, 3.0, 1e-05, 'paper', 0.5900292425847781),
]
PINNED_DPSVI_PLD = [
    ('poisson', 5000, 200, 50, 1.0, 1e-05, 'pld', 0.9672606045785931),
    ('poisson', 5000, 200, 50, 3.0, 1e-05, 'pld', 0.6825083222154872),
]


def _close(new: float, old: float, rtol: float) -> bool:
    """Within rtol of the pinned value, and (the one-sided 'not worse') not above it by more than rtol."""
    return abs(new - old) <= rtol * abs(old)


# -- the pinned values ---------------------------------------------------------------------------------


def test_gaussian_sigmas_are_the_pinned_ones_and_meet_the_profile():
    for eps, delta, sens, count, method, old in PINNED_GAUSSIAN:
        sigma = calibrate_gaussian(eps, delta, sens, method, count)
        assert _close(sigma, old, EXACT_RTOL), (eps, delta, sens, count, method, sigma, old)
        assert gaussian_delta(sigma, eps, sens, count) <= delta  # every method, against the exact profile


def test_gdp_epsilon_is_the_pinned_one_and_meets_the_profile():
    for mu, delta, old in PINNED_GDP_EPSILON:
        eps = gdp_epsilon(mu, delta)
        assert _close(eps, old, EXACT_RTOL), (mu, delta, eps, old)
        assert gdp_delta(mu, eps) <= delta


def test_vocabulary_selection_is_the_pinned_one_and_meets_its_bounds():
    for eps, delta, k, neighbours, old_sigma, old_tau in PINNED_SELECTION:
        sigma, tau = calibrate_selection(eps, delta, k, neighbours)
        assert _close(sigma, old_sigma, EXACT_RTOL) and _close(tau, old_tau, EXACT_RTOL), (eps, delta, k, neighbours)
        sensitivity = 1.0 if neighbours == "add-remove" else math.sqrt(2.0)
        assert gaussian_delta(sigma, eps, sensitivity) <= delta / 2
        assert threshold_delta(tau, sigma, k) <= delta / 2


def test_paper_baselines_are_the_pinned_ones():
    for eps, delta, nu, n_iter, composition, old in PINNED_BASELINE:
        z = paper_baseline_noise_multiplier(eps, delta, nu, n_iter, composition)
        assert _close(z, old, EXACT_RTOL), (eps, delta, nu, n_iter, composition, z, old)
        if composition == "advanced":  # the search's guarantee: the recipe's evaluated total meets epsilon
            assert paper_baseline_epsilon(z, nu, n_iter, delta, composition) <= eps


def test_spectral_split_is_the_pinned_one():
    for cfg, accounting, eps, delta, multipliers in PINNED_SPECTRAL:
        split = DEFAULT_SPLITS[cfg]
        laplace = tuple(n for n in split if n.startswith("p1"))
        gaussian = tuple(n for n in split if n not in laplace)
        budget = SpectralBudget(eps, delta, dict(split), gaussian, laplace, accounting=accounting)
        for name, old in multipliers:
            assert _close(budget._multiplier(name), old, EXACT_RTOL), (cfg, accounting, eps, delta, name)
        if accounting == "exact":  # one Gaussian with mu = 1/z (Dong, Roth & Su 2022, Cor. 3.3)
            assert gaussian_delta(budget._z, eps) <= delta


def test_dp_vem_noise_scale_is_the_pinned_one():
    for eps, delta, neighbours, n_iter, old in PINNED_DP_VEM:
        sigma = DPVariationalEM(5, epsilon=eps, delta=delta, neighbours=neighbours, n_iterations=n_iter).noise_scale()
        assert _close(sigma, old, EXACT_RTOL), (eps, delta, neighbours, n_iter)
        sensitivity = 1.0 if neighbours == "add-remove" else math.sqrt(2.0)
        assert gaussian_delta(sigma, eps, sensitivity, n_iter) <= delta


def _fresh_epsilon(kind: str, n_docs: int, n_iter: int, batch: int, z: float, delta: float) -> float:
    """The total epsilon on a freshly built dp-accounting RDP accountant (no topicdp code involved)."""
    gaussian = dp_event.GaussianDpEvent(z)
    if kind == "poisson":
        rel = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        step = dp_event.PoissonSampledDpEvent(batch / n_docs, gaussian)
    else:
        rel = dp_accounting.NeighboringRelation.REPLACE_ONE
        step = dp_event.SampledWithoutReplacementDpEvent(n_docs, batch, gaussian)
    acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=rel)
    acc.compose(dp_event.SelfComposedDpEvent(step, n_iter))
    return acc.get_epsilon(delta)


#: sampling without replacement costs ~8 s per calibration (dp-accounting's RDP of that event); one row of two
FAST_DPSVI = [r for r in PINNED_DPSVI if not (r[0] == "fixed" and r[6] == "rdp" and r[4] == 3.0)]


@pytest.mark.parametrize("row", FAST_DPSVI, ids=lambda r: "-".join(map(str, r[:7])))
def test_dpsvi_noise_multiplier_is_the_pinned_one(row):
    kind, n_docs, n_iter, batch, eps, delta, accountant, old = row
    z = calibrate_noise_multiplier(make_scheme(kind, n_docs, n_iter, batch_size=batch), eps, delta, accountant)
    assert _close(z, old, DPSVI_RTOL if accountant != "paper" else EXACT_RTOL), (row, z)
    if accountant == "rdp":
        assert _fresh_epsilon(kind, n_docs, n_iter, batch, z, delta) <= eps


@pytest.mark.slow
@pytest.mark.parametrize("row", PINNED_DPSVI_PLD, ids=lambda r: f"pld-eps{r[4]}")
def test_dpsvi_pld_noise_multiplier_is_the_pinned_one(row):
    """About 15 s each: dp-accounting's PLD of 200 Poisson-sampled Gaussians per evaluation."""
    kind, n_docs, n_iter, batch, eps, delta, accountant, old = row
    scheme = make_scheme(kind, n_docs, n_iter, batch_size=batch)
    z = calibrate_noise_multiplier(scheme, eps, delta, accountant)
    assert _close(z, old, DPSVI_RTOL) and accountant_epsilon(scheme, z, delta, "pld") <= eps


# -- the search itself -----------------------------------------------------------------------------------


@pytest.mark.parametrize("guess", [1e-3, 1.0, 3.0, 1e4])
def test_search_returns_the_smallest_meeting_value_from_any_guess(guess):
    calls = []

    def cost(x):
        calls.append(x)
        return 1.0 / x

    x = smallest_meeting(cost, 1.0 / 3.0, guess=guess)
    assert len(calls) == len(set(calls))  # memoised: Brent's bracket ends and last point are not re-evaluated
    assert 1.0 / x <= 1.0 / 3.0  # as evaluated
    assert x <= 3.0 * (1.0 + 8 * 2.0**-52)  # a few ulps at most above the root


def test_search_rounds_a_closed_form_root_upward_until_it_meets():
    target = 0.1

    def cost(x):  # a step just above the closed form: the rounding must cross it
        return 0.2 if x < 5.0 * (1.0 + 1e-12) else 0.05

    x = smallest_meeting(cost, target, root=5.0)
    assert cost(x) <= target and 5.0 < x < 5.0 * (1.0 + 1e-11)
    assert smallest_meeting(cost, target, root=6.0) == 6.0  # a root that already meets is returned as is


def test_search_with_an_explicit_bracket_returns_its_lower_end_when_that_meets():
    assert smallest_meeting(lambda x: 0.0, 1.0, bracket=(0.0, 1.0)) == 0.0
    x = smallest_meeting(lambda x: math.exp(-x * x), 1e-200, bracket=(0.0, 1.0), log_scale=True)
    assert math.exp(-x * x) <= 1e-200 and x == pytest.approx(math.sqrt(200 * math.log(10)), rel=1e-14)


def test_search_relative_tolerance_bounds_the_excess():
    x = smallest_meeting(lambda x: 1.0 / x, 0.5, guess=1.0, rtol=1e-3)
    assert 2.0 <= x <= 2.0 * (1.0 + 2e-3)


def test_search_reports_a_target_it_cannot_bracket():
    with pytest.raises(NoBracketError, match="not met"):
        smallest_meeting(lambda x: 1.0, 0.5, guess=1.0, max_expansions=10)
    with pytest.raises(NoBracketError, match="does not grow"):
        smallest_meeting(lambda x: 0.0, 0.5, guess=1.0, max_expansions=10)
    with pytest.raises(ValueError, match="exactly one"):
        smallest_meeting(lambda x: 0.0, 0.5, guess=1.0, root=1.0)


def test_calibrate_event_meets_the_target_on_a_fresh_accountant_and_matches_the_exact_optimum():
    """A lone Gaussian through the accountant face: RDP is above the exact optimum (Balle & Wang 2018,
    Thm. 8; calibrate_gaussian 'analytic') and within 15% of it, and meets its own accountant."""
    def fresh():
        return rdp_privacy_accountant.RdpAccountant()

    sigma = calibrate_event(fresh, dp_event.GaussianDpEvent, 1.0, 1e-6, guess=1.0)
    acc = fresh()
    acc.compose(dp_event.GaussianDpEvent(sigma))
    assert acc.get_epsilon(1e-6) <= 1.0
    exact = calibrate_gaussian(1.0, 1e-6, method="analytic")
    assert exact <= sigma <= 1.15 * exact
    assert gaussian_delta(sigma, 1.0) <= 1e-6


def test_no_other_root_finder_in_the_package():
    """The one search is the only root finder of a privacy target: ``brentq`` and dp-accounting's
    ``calibrate_dp_mechanism`` appear in no other module (the independent auditor keeps its own on purpose)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "topicdp"
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("audit/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in ("brentq", "bisect", "calibrate_dp_mechanism", "_round_up"):
                found.append((rel, name))
    assert {rel for rel, _ in found} == {"rdp/search.py"}, found
