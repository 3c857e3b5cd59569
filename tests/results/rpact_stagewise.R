# Frozen rpact reference values for effstats.sequential.inference (stage-wise ordering p-values, median-unbiased
# estimates and final confidence intervals of group-sequential tests).
#
# Regenerate (from the repository root):  Rscript tests/results/rpact_stagewise.R
# Writes tests/results/rpact_stagewise.csv; the R and rpact versions and the exact calls are written into its
# header. tests/test_sequential_inference.py compares effstats against this file (no R needed) and, under
# @pytest.mark.needs_r, against rpact live through rpy2 for the same cases.
#
# Data: one-sample normal means with known SD 1 (normalApproximation = TRUE), so the overall z at stage j is
# overallMean_j * sqrt(overallSampleSize_j); sample sizes are proportional to the information rates, so the
# information at stage j is n_j. Calls per case:
#   design <- getDesignGroupSequential(kMax = k, alpha = alpha, sided = sided, typeOfDesign = type,
#                                      gammaA = gammaA, informationRates = n / n[k],
#                                      futilityBounds = fut, bindingFutility = binding)
#   data   <- getDataset(overallSampleSizes = n[1:s], overallMeans = z[1:s] / sqrt(n[1:s]), overallStDevs = rep(1, s))
#   res    <- getAnalysisResults(design, data, normalApproximation = TRUE, directionUpper = up)
#   fci    <- getFinalConfidenceInterval(design, data, normalApproximation = TRUE, directionUpper = up,
#                                        tolerance = 1e-10)
#   pfin   <- getFinalPValue(getStageResults(design, data, normalApproximation = TRUE, directionUpper = up))
suppressMessages(library(rpact))

families <- list(
  list(type = "asOF", gammaA = NA), list(type = "asP", gammaA = NA), list(type = "asKD", gammaA = 2),
  list(type = "asHSD", gammaA = -4), list(type = "OF", gammaA = NA), list(type = "P", gammaA = NA)
)
shapes <- list(
  "2" = list(c(50, 100), c(20, 100)),
  "3" = list(c(40, 80, 120), c(25, 70, 100)),
  "4" = list(c(25, 50, 75, 100), c(15, 45, 60, 100)),
  "5" = list(c(20, 40, 60, 80, 100), c(10, 30, 50, 65, 100))
)
fmt <- function(x) paste(formatC(x, digits = 17, format = "g"), collapse = ";")

rows <- list()
add_case <- function(design, fam, n, z, s, up, label) {
  k <- length(n)
  zz <- z[1:s]
  data <- getDataset(overallSampleSizes = n[1:s], overallMeans = zz / sqrt(n[1:s]), overallStDevs = rep(1, s))
  res <- getAnalysisResults(design, data, normalApproximation = TRUE, directionUpper = up)
  fci <- getFinalConfidenceInterval(design, data, normalApproximation = TRUE, directionUpper = up, tolerance = 1e-10)
  sr <- getStageResults(design, data, normalApproximation = TRUE, directionUpper = up)
  pfin <- getFinalPValue(sr)
  fut <- if (design$bindingFutility) design$futilityBounds else rep(NA_real_, k - 1)
  rows[[length(rows) + 1]] <<- data.frame(
    case = label, type = fam$type, gamma = fam$gammaA, k = k, alpha = design$alpha, sided = design$sided,
    binding = design$bindingFutility, information = fmt(n), critical = fmt(design$criticalValues),
    futility = fmt(fut), z = fmt(zz), stage = s, direction_upper = up,
    z_rpact = fmt(sr$overallTestStatistics[1:s]), sd_final = sr$overallStDevs[s],
    final_stage = pfin$finalStage, p_final = pfin$pFinal,
    mue = fci$medianUnbiased, ci_low = fci$finalConfidenceInterval[1], ci_high = fci$finalConfidenceInterval[2],
    ar_p_final = res$finalPValues[s], ar_mue = res$medianUnbiasedEstimates[s],
    ar_ci_low = res$finalConfidenceIntervalLowerBounds[s], ar_ci_high = res$finalConfidenceIntervalUpperBounds[s],
    stringsAsFactors = FALSE
  )
}

i <- 0
for (fam in families) {
  for (sided in c(1, 2)) {
    i <- i + 1
    k <- c(2, 3, 4, 5)[(i %% 4) + 1]
    n <- shapes[[as.character(k)]][[(i %% 2) + 1]]
    alpha <- if (sided == 1) 0.025 else 0.05
    args <- list(kMax = k, alpha = alpha, sided = sided, typeOfDesign = fam$type, informationRates = n / n[k])
    if (!is.na(fam$gammaA)) args$gammaA <- fam$gammaA
    design <- do.call(getDesignGroupSequential, args)
    cv <- design$criticalValues
    for (s in 1:k) {
      z <- cv - 0.7
      z[s] <- cv[s] + 0.35
      add_case(design, fam, n, z, s, TRUE, sprintf("%s-%d-k%d-stop%d", fam$type, sided, k, s))
    }
    z <- cv - 0.7
    z[k] <- cv[k] - 1.0  # reaches the final look without rejecting
    add_case(design, fam, n, z, k, TRUE, sprintf("%s-%d-k%d-final-accept", fam$type, sided, k))
    z <- cv - 0.2
    z[k] <- cv[k] + 1.5  # far past the final bound
    add_case(design, fam, n, z, k, TRUE, sprintf("%s-%d-k%d-final-far", fam$type, sided, k))
    if (sided == 2) {  # the other direction: negative z crossing -c at stage 2
      z <- -(cv - 0.7)
      z[2] <- -(cv[2] + 0.5)
      add_case(design, fam, n, z, 2, FALSE, sprintf("%s-%d-k%d-stop2-lower", fam$type, sided, k))
    }
  }
}

# binding futility bounds (one-sided): stop for efficacy or for futility
for (fam in families[1:2]) {
  n <- c(30, 60, 100)
  design <- getDesignGroupSequential(kMax = 3, alpha = 0.025, sided = 1, typeOfDesign = fam$type,
                                     informationRates = n / 100, futilityBounds = c(0, 0.5), bindingFutility = TRUE)
  cv <- design$criticalValues
  for (s in 1:3) {
    z <- c(0.8, 1.2, cv[3] - 0.3)
    z[s] <- cv[s] + 0.2
    add_case(design, fam, n, z, s, TRUE, sprintf("%s-1-k3-binding-stop%d", fam$type, s))
  }
  add_case(design, fam, n, c(0.8, 1.2, cv[3] - 1.2), 3, TRUE, sprintf("%s-1-k3-binding-final-accept", fam$type))
  add_case(design, fam, n, c(0.8, 0.2, NA), 2, TRUE, sprintf("%s-1-k3-binding-futility2", fam$type))
}

out <- do.call(rbind, rows)
path <- "tests/results/rpact_stagewise.csv"
con <- file(path, "w")
writeLines(c(
  "# Frozen rpact outputs for tests/test_sequential_inference.py; generated by tests/results/rpact_stagewise.R",
  sprintf("# %s; rpact %s; generated %s", R.version.string, as.character(packageVersion("rpact")),
          format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")),
  "# p_final: getFinalPValue(getStageResults(design, data, normalApproximation = TRUE, directionUpper = direction_upper))$pFinal",
  "# mue, ci_low, ci_high: getFinalConfidenceInterval(design, data, normalApproximation = TRUE, directionUpper = ..., tolerance = 1e-10)",
  "# ar_*: getAnalysisResults(design, data, normalApproximation = TRUE, directionUpper = ...) at the last stage (default tolerance 1e-6)",
  "# information, critical, futility, z: ';'-separated per stage (z up to the analysed stage); z_rpact: rpact's",
  "#   overallTestStatistics (= z for directionUpper = TRUE); sd_final: overallStDevs at the analysed stage (rpact's",
  "#   estimates are the standardised ones times this)"
), con)
write.csv(out, con, row.names = FALSE)
close(con)
cat("wrote", nrow(out), "cases to", path, "\n")
